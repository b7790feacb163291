package storetest

import (
	"context"
	"testing"
	"time"

	"tuttid/store"
)

// Store is a migrated database file owned by one test: it closes when the
// test ends, and its seeding methods fail the test on error.
type Store struct {
	*store.Store
	t   testing.TB
	ctx context.Context
}

// New opens a fresh database in t's temp dir the way the server does
// (store.Open), or a fresh PostgreSQL database under EnvDB. Each test has
// its own, so tests may run in parallel.
func New(t testing.TB) *Store {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, Location(t))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return &Store{Store: st, t: t, ctx: ctx}
}

// SeedTime is when seeded rows are created unless a spec says otherwise.
func SeedTime() time.Time { return time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC) }
