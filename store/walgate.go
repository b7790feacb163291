package store

import (
	"context"
	"database/sql"
	"sync"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
)

// walGate holds back new statements while BoundWAL truncates the WAL.
// A TRUNCATE checkpoint needs SQLite's write lock, which it asks for by
// polling (the busy handler); writers that follow each other with no gap
// (a stream's events, a fork's history) took it back every time, and the
// checkpoint never ran. Statements and transactions already running go on;
// a statement waits at most walCheckpointBusy, so one issued outside its
// goroutine's open transaction (which the checkpoint waits for) cannot
// deadlock, only wait.
type walGate struct {
	mu     sync.Mutex
	paused chan struct{} // nil: open; closed when the pause ends
}

// pause holds back new statements until resume is called.
func (g *walGate) pause() (resume func()) {
	ch := make(chan struct{})
	g.mu.Lock()
	g.paused = ch
	g.mu.Unlock()
	return func() {
		g.mu.Lock()
		g.paused = nil
		g.mu.Unlock()
		close(ch)
	}
}

// wait returns when no pause is on, or after walCheckpointBusy.
func (g *walGate) wait(ctx context.Context) error {
	g.mu.Lock()
	ch := g.paused
	g.mu.Unlock()
	if ch == nil {
		return nil
	}
	t := time.NewTimer(walCheckpointBusy)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// gatedDriver is ent's driver with each statement and transaction start
// passing the gate first.
type gatedDriver struct {
	*entsql.Driver
	gate *walGate
}

func (d gatedDriver) Exec(ctx context.Context, query string, args, v any) error {
	if err := d.gate.wait(ctx); err != nil {
		return err
	}
	return d.Driver.Exec(ctx, query, args, v)
}

func (d gatedDriver) Query(ctx context.Context, query string, args, v any) error {
	if err := d.gate.wait(ctx); err != nil {
		return err
	}
	return d.Driver.Query(ctx, query, args, v)
}

func (d gatedDriver) Tx(ctx context.Context) (dialect.Tx, error) {
	if err := d.gate.wait(ctx); err != nil {
		return nil, err
	}
	return d.Driver.Tx(ctx)
}

func (d gatedDriver) BeginTx(ctx context.Context, opts *sql.TxOptions) (dialect.Tx, error) {
	if err := d.gate.wait(ctx); err != nil {
		return nil, err
	}
	return d.Driver.BeginTx(ctx, opts)
}
