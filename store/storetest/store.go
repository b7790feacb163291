package storetest

import (
	"context"
	"sync"
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

// migrateMu serializes store.Open among a package's parallel tests: ent's
// migration (Schema.Create) writes its package-level table descriptions,
// so two running at once race (go test -race). The server opens one store,
// so the lock lives here, not in store.
var migrateMu sync.Mutex

// New opens a fresh database in t's temp dir the way the server does
// (store.Open), or a fresh PostgreSQL database under EnvDB. Each test has
// its own, so tests may run in parallel.
func New(t testing.TB) *Store {
	t.Helper()
	ctx := context.Background()
	migrateMu.Lock()
	st, err := store.Open(ctx, Location(t))
	migrateMu.Unlock()
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return &Store{Store: st, t: t, ctx: ctx}
}

// Wrap gives an already open store the kit's seeding methods (a test that
// opens its own, such as one run on both backends whatever EnvDB says).
func Wrap(t testing.TB, st *store.Store) *Store {
	return &Store{Store: st, t: t, ctx: context.Background()}
}

// SeedTime is when seeded rows are created unless a spec says otherwise.
func SeedTime() time.Time { return time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC) }
