package storetest

import (
	"context"
	"sync"
	"sync/atomic"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"tuttid/ent"
	"tuttid/store"
)

// Counter is a dialect.Driver that counts, and keeps, the statements an
// ent client sends outside transactions (queries and execs alike): a read
// path's cost. Statements inside a transaction (ent's UpdateOne and
// CreateBulk open their own) are not counted.
type Counter struct {
	dialect.Driver
	n     atomic.Int64
	mu    sync.Mutex
	stmts []string
}

// Counting returns a store over the same database whose client sends its
// statements through the Counter returned; s's own client is not counted.
func (s *Store) Counting() (*store.Store, *Counter) {
	c := &Counter{Driver: entsql.OpenDB(s.Client.Dialect(), s.DB)}
	return &store.Store{Client: ent.NewClient(ent.Driver(c)), DB: s.DB}, c
}

func (c *Counter) Query(ctx context.Context, query string, args, v any) error {
	c.record(query)
	return c.Driver.Query(ctx, query, args, v)
}

func (c *Counter) Exec(ctx context.Context, query string, args, v any) error {
	c.record(query)
	return c.Driver.Exec(ctx, query, args, v)
}

func (c *Counter) record(query string) {
	c.n.Add(1)
	c.mu.Lock()
	c.stmts = append(c.stmts, query)
	c.mu.Unlock()
}

// N is the number of statements sent since the last Reset.
func (c *Counter) N() int64 { return c.n.Load() }

// Reset returns N and starts counting (and keeping statements) afresh.
func (c *Counter) Reset() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stmts = nil
	return c.n.Swap(0)
}

// Count runs fn and returns how many statements it sent.
func (c *Counter) Count(fn func()) int64 {
	before := c.n.Load()
	fn()
	return c.n.Load() - before
}

// Statements returns the statements sent since the last Reset, in order.
func (c *Counter) Statements() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.stmts...)
}
