package pgfeed

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"tuttid/activity"
)

// The outbox (activity.Outbox) keeps the events of a state change in the
// transaction that makes it: Stage inserts them into activity_outbox, a
// plain insert that locks no row another transaction waits for (the
// workspace's seq is not taken there: a session's transaction never holds
// the counter row that every event of its workspace waits for). The keys
// are the events' ids in activity_events. Committed queues a marker
// for each, in the order of this instance's Publish calls; the writer
// moves a marked row into activity_events (delete, number, insert,
// NOTIFY in one statement), so a row is moved once whoever moves it.
//
// A row nobody marks (the process died between its commit and Committed,
// or its queue was full or closed) is moved by a sweep: at start, every
// row of this instance (none of them can be queued yet); then, every
// SweepAfter/2, the rows of any instance older than SweepAfter, for an
// instance that does not come back. Not every instance's rows at start:
// those of a live instance are marked in its queue behind its earlier
// events (a delta of the same message, say), and moving them first would
// number them out of that order.

// sweepLockKey makes the sweeps of all instances take turns (a
// transaction-level advisory lock): each takes the oldest rows left, so
// the rows are numbered in the order they were staged even when two
// instances sweep at once.
const sweepLockKey int64 = 0x7475_7474_6f62 // "ttob"

// stageRows bounds the rows of one INSERT (4 parameters each).
const stageRows = 500

// move takes the outbox row $1 out, numbers it from its workspace's
// counter, stores and notifies it as insert does; no row when it was
// moved already.
var move = `
WITH o AS (
	DELETE FROM activity_outbox WHERE id = $1 RETURNING workspace_id, payload
), c AS (
	INSERT INTO activity_seqs AS c (workspace_id, seq)
	SELECT workspace_id, $2 FROM o
	ON CONFLICT (workspace_id) DO UPDATE SET seq = c.seq + 1
	RETURNING workspace_id, seq
), e AS (
	INSERT INTO activity_events (workspace_id, seq, id, at, payload)
	SELECT c.workspace_id, c.seq, $1, clock_timestamp(), o.payload FROM c, o
	RETURNING workspace_id, seq, at, payload
)
SELECT seq, at, payload, ` + notifyOf("workspace_id", "payload") + `
FROM e`

// Stage implements activity.Outbox: it inserts events into the outbox
// through tx and returns their keys. An event Publish would refuse (no
// workspace, a reserved kind) is logged and left out.
func (f *Feed) Stage(ctx context.Context, tx activity.Execer, events ...activity.Event) ([]string, error) {
	keys := make([]string, 0, len(events))
	args := make([]any, 0, 4*min(len(events), stageRows))
	flush := func() error {
		if len(args) == 0 {
			return nil
		}
		var b strings.Builder
		b.WriteString(`INSERT INTO activity_outbox (id, instance, workspace_id, payload) VALUES `)
		for i := range len(args) / 4 {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "($%d, $%d, $%d, $%d)", 4*i+1, 4*i+2, 4*i+3, 4*i+4)
		}
		if _, err := tx.ExecContext(ctx, b.String(), args...); err != nil {
			return fmt.Errorf("activity: stage events: %w", err)
		}
		args = args[:0]
		return nil
	}
	for _, e := range events {
		e, ok := f.check(ctx, e)
		if !ok {
			continue
		}
		payload, err := encode(e)
		if err != nil {
			return nil, err
		}
		key := uuid.NewString()
		keys = append(keys, key)
		args = append(args, key, f.instance, e.WorkspaceID, payload)
		if len(args) == 4*stageRows {
			if err := flush(); err != nil {
				return nil, err
			}
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return keys, nil
}

// Committed implements activity.Outbox: it queues the staged events keys
// for the writer, behind this instance's earlier Publish calls. It never
// waits for the database. A key it cannot queue (the feed closed, the
// queue full) stays in the outbox for a sweep.
func (f *Feed) Committed(ctx context.Context, keys []string) {
	if len(keys) == 0 {
		return
	}
	f.mu.Lock()
	switch {
	case f.closed:
		f.mu.Unlock()
		f.log.WarnContext(ctx, "activity: staged events left in the outbox: the feed is closed", "events", len(keys))
		return
	case len(f.queue)+len(keys) > f.qmax:
		f.mu.Unlock()
		f.log.WarnContext(ctx, "activity: staged events left in the outbox for the sweep: the queue is full", "events", len(keys))
		return
	}
	for _, k := range keys {
		f.queue = append(f.queue, queued{outbox: k})
	}
	f.mu.Unlock()
	f.signal()
}

// moveOne moves outbox row key into the events and returns it numbered,
// or with Seq 0 if it was moved before.
func moveOne(ctx context.Context, db queryRower, key string, epoch int64) (activity.Event, error) {
	var (
		seq      int64
		at       time.Time
		payload  []byte
		notified string
	)
	err := db.QueryRowContext(ctx, move, key, epoch).Scan(&seq, &at, &payload, &notified)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return activity.Event{}, nil
	case err != nil:
		return activity.Event{}, fmt.Errorf("activity: move staged event: %w", err)
	}
	return decode(seq, at, payload)
}

// sweep moves the outbox rows no marker of this process will move, in the
// order they were staged, skipping rows another instance is moving: with
// own the rows of this instance (at start), else those of any instance
// staged more than f.grace ago. Each page is one transaction; the moved
// events are handed to the local subscribers.
func (f *Feed) sweep(ctx context.Context, own bool) (int, error) {
	moved := 0
	for {
		stored, err := f.sweepPage(ctx, own)
		if err != nil {
			return moved, err
		}
		f.deliver(ctx, stored)
		f.prune(ctx, stored)
		moved += len(stored)
		if len(stored) < writeBatch {
			return moved, nil
		}
	}
}

func (f *Feed) sweepPage(ctx context.Context, own bool) (_ []activity.Event, err error) {
	where, arg := `instance = $1`, any(f.instance)
	if !own {
		where, arg = `created_at < clock_timestamp() - $1 * interval '1 microsecond'`, f.grace.Microseconds()
	}
	tx, err := f.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("activity: sweep the outbox: %w", err)
	}
	defer func() {
		// After the commit, or with nothing to sweep: no error to report.
		if rerr := tx.Rollback(); err != nil && !errors.Is(rerr, sql.ErrTxDone) {
			err = errors.Join(err, rerr)
		}
	}()
	// At start, wait for the turn; later, another sweeping is enough.
	lock := `SELECT pg_try_advisory_xact_lock($1)`
	if own {
		lock = `SELECT true FROM pg_advisory_xact_lock($1)`
	}
	var locked bool
	if err := tx.QueryRowContext(ctx, lock, sweepLockKey).Scan(&locked); err != nil {
		return nil, fmt.Errorf("activity: sweep the outbox: lock: %w", err)
	}
	if !locked {
		return nil, nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT id FROM activity_outbox WHERE `+where+` ORDER BY n LIMIT `+strconv.Itoa(writeBatch)+` FOR UPDATE SKIP LOCKED`, arg)
	if err != nil {
		return nil, fmt.Errorf("activity: sweep the outbox: %w", err)
	}
	var keys []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			rows.Close()
			return nil, fmt.Errorf("activity: sweep the outbox: %w", err)
		}
		keys = append(keys, k)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, fmt.Errorf("activity: sweep the outbox: %w", err)
	}
	epoch := activity.EpochSeq(time.Now())
	stored := make([]activity.Event, 0, len(keys))
	for _, k := range keys {
		e, err := moveOne(ctx, tx, k, epoch)
		if err != nil {
			return nil, err
		}
		stored = append(stored, e)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("activity: sweep the outbox: commit: %w", err)
	}
	return stored, nil
}
