package pgfeed

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"tuttid/activity"
)

// Config configures a Feed.
type Config struct {
	// DB is the store's pool: inserts and reads go through it.
	DB *sql.DB
	// URL is the database's URL: the LISTEN connection is opened from it.
	URL string
	// Options configures the local broker (its FirstSeq is not used: the
	// seqs are the database's).
	Options activity.Options
	// Keep is how many events per workspace the table keeps (0: twice the
	// window, at least 256).
	Keep int
	// QueueMax bounds the events waiting for the database (0: 1<<16).
	QueueMax int
	// Instance names this instance's rows of the outbox (outbox.go): it
	// must be the same after a restart (the server's instance id), and
	// not another live instance's.
	Instance string
	// SweepAfter is the age after which an outbox row is moved by any
	// instance (0: 30 seconds); one is swept every SweepAfter/2.
	SweepAfter time.Duration
	Logger     *slog.Logger
}

// Feed is an activity.Feed shared by the instances of one database.
type Feed struct {
	local  *activity.Broker
	db     *sql.DB
	url    string
	log    *slog.Logger
	window int
	keep   int64
	// instance and grace: see Config.Instance and Config.SweepAfter.
	instance string
	grace    time.Duration

	mu     sync.Mutex
	ws     map[string]*sync.Mutex // serializes the reads and deliveries of a workspace
	queue  []queued
	qmax   int
	wake   chan struct{}
	closed bool

	stop    context.CancelFunc
	drained chan struct{} // closed when the writer has returned
	wg      sync.WaitGroup
}

// New creates the feed's tables if needed and starts its writer and its
// listener; Close stops them.
func New(ctx context.Context, cfg Config) (*Feed, error) {
	f, err := open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	f.run(ctx, true)
	return f, nil
}

// open creates the tables and returns the feed, not running yet.
func open(ctx context.Context, cfg Config) (*Feed, error) {
	if err := migrate(ctx, cfg.DB); err != nil {
		return nil, err
	}
	opts := cfg.Options
	opts.FirstSeq = 0
	f := &Feed{db: cfg.DB, url: cfg.URL, log: cfg.Logger, ws: map[string]*sync.Mutex{},
		qmax: cfg.QueueMax, wake: make(chan struct{}, 1), drained: make(chan struct{}),
		instance: cfg.Instance, grace: cfg.SweepAfter}
	if f.log == nil {
		f.log = slog.Default()
	}
	opts.Logger = f.log
	f.local = activity.New(opts)
	f.window = opts.Window
	if f.window == 0 {
		f.window = activity.DefaultWindow
	}
	f.keep = int64(cfg.Keep)
	if f.keep <= 0 {
		f.keep = max(2*int64(f.window), 256)
	}
	if f.qmax <= 0 {
		f.qmax = 1 << 16
	}
	if f.grace <= 0 {
		f.grace = 30 * time.Second
	}
	// What the previous process of this instance staged and did not
	// move; before anything of this one is queued (outbox.go).
	n, err := f.sweep(ctx, true)
	if err != nil {
		f.local.Close()
		return nil, err
	}
	if n > 0 {
		f.log.InfoContext(ctx, "activity: published the events the previous run left in the outbox", "events", n)
	}
	return f, nil
}

// run starts the writer and, with listen, the listener (a test leaves it
// out to play an instance cut off from the notifications).
func (f *Feed) run(ctx context.Context, listen bool) {
	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	f.stop = stop
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		defer close(f.drained)
		f.write(runCtx)
	}()
	if listen {
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			f.listen(runCtx)
		}()
	}
}

// Subscribe is activity.Broker's Subscribe on this instance's broker,
// after it was brought up to date with the table for f.WorkspaceID: the
// first subscription of a workspace starts it from the table (latest seq
// and the window's events), and one resuming after a seq this instance has
// not delivered yet (another instance made it a moment ago) reads up to it
// first. Errors are the broker's, or the database's.
func (f *Feed) Subscribe(ctx context.Context, flt activity.Filter) (<-chan activity.Event, error) {
	if flt.WorkspaceID == "" {
		return nil, activity.ErrNoWorkspace
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	mu := f.lock(flt.WorkspaceID)
	defer mu.Unlock()
	latest, started := f.local.Latest(flt.WorkspaceID)
	switch {
	case !started:
		if err := f.start(ctx, flt.WorkspaceID); err != nil {
			return nil, err
		}
	case flt.AfterSeq != nil && *flt.AfterSeq > latest:
		if err := f.catchUp(ctx, flt.WorkspaceID, latest); err != nil {
			return nil, err
		}
	}
	return f.local.Subscribe(ctx, flt)
}

// Close stops the writer (after it wrote what was queued, for a few
// seconds at most), the listener and the local broker; it is idempotent.
func (f *Feed) Close() {
	f.mu.Lock()
	already := f.closed
	f.closed = true
	f.mu.Unlock()
	if already {
		return
	}
	f.signal()
	select {
	case <-f.drained:
	case <-time.After(5 * time.Second):
	}
	f.stop()
	f.wg.Wait()
	f.local.Close()
}

// lock locks and returns the mutex of workspace ws.
func (f *Feed) lock(ws string) *sync.Mutex {
	f.mu.Lock()
	mu := f.ws[ws]
	if mu == nil {
		mu = &sync.Mutex{}
		f.ws[ws] = mu
	}
	f.mu.Unlock()
	mu.Lock()
	return mu
}

// started lists the workspaces this instance delivers.
func (f *Feed) started() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, 0, len(f.ws))
	for ws := range f.ws {
		out = append(out, ws)
	}
	return out
}

// start starts workspace ws in the local broker from the table: its
// counter (made now if the workspace never had an event, from the time
// epoch as on SQLite) and the events of the last window. Runs under the
// workspace's lock.
func (f *Feed) start(ctx context.Context, ws string) error {
	if _, err := f.db.ExecContext(ctx, `INSERT INTO activity_seqs (workspace_id, seq) VALUES ($1, $2) ON CONFLICT (workspace_id) DO NOTHING`,
		ws, activity.EpochSeq(time.Now())); err != nil {
		return fmt.Errorf("activity: start workspace %s: %w", ws, err)
	}
	var latest int64
	if err := f.db.QueryRowContext(ctx, `SELECT seq FROM activity_seqs WHERE workspace_id = $1`, ws).Scan(&latest); err != nil {
		return fmt.Errorf("activity: start workspace %s: %w", ws, err)
	}
	events, err := f.read(ctx, ws, latest-int64(f.window), f.window)
	if err != nil {
		return err
	}
	after := latest
	if len(events) > 0 {
		after = events[0].Seq - 1
	}
	f.local.Start(ws, after)
	for _, e := range events {
		f.local.Deliver(ctx, e)
	}
	return nil
}

// catchUp delivers the stored events of ws after seq after (the latest
// this instance delivered), in pages. Runs under the workspace's lock.
func (f *Feed) catchUp(ctx context.Context, ws string, after int64) error {
	const page = 512
	for {
		events, err := f.read(ctx, ws, after, page)
		if err != nil {
			return err
		}
		for _, e := range events {
			f.local.Deliver(ctx, e)
			after = e.Seq
		}
		if len(events) < page {
			return nil
		}
	}
}

// read returns up to limit stored events of ws after seq after, in order.
func (f *Feed) read(ctx context.Context, ws string, after int64, limit int) ([]activity.Event, error) {
	rows, err := f.db.QueryContext(ctx, `SELECT seq, at, payload FROM activity_events WHERE workspace_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
		ws, after, limit)
	if err != nil {
		return nil, fmt.Errorf("activity: read workspace %s after %d: %w", ws, after, err)
	}
	defer rows.Close()
	var out []activity.Event
	for rows.Next() {
		var (
			seq     int64
			at      time.Time
			payload []byte
		)
		if err := rows.Scan(&seq, &at, &payload); err != nil {
			return nil, fmt.Errorf("activity: read workspace %s: %w", ws, err)
		}
		e, err := decode(seq, at, payload)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("activity: read workspace %s: %w", ws, err)
	}
	return out, nil
}

// advance brings ws up to seq upTo in the local broker if it is started
// and behind: e, when it is upTo's event, is delivered as it is; anything
// missing before it is read from the table.
func (f *Feed) advance(ctx context.Context, ws string, upTo int64, e *activity.Event) error {
	mu := f.lock(ws)
	defer mu.Unlock()
	latest, started := f.local.Latest(ws)
	if !started || upTo <= latest {
		return nil
	}
	if e == nil || upTo != latest+1 {
		return f.catchUp(ctx, ws, latest)
	}
	f.local.Deliver(ctx, *e)
	return nil
}
