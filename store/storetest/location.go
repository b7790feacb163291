package storetest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"tuttid/store"
	"tuttid/store/pgtest"
)

// EnvDB switches every test database of the kit to PostgreSQL:
// TUTTID_TEST_DB=postgres runs the same tests on a fresh PostgreSQL
// database each (store/pgtest) instead of a SQLite file.
const EnvDB = "TUTTID_TEST_DB"

// OnPostgres reports whether the kit's databases are PostgreSQL.
func OnPostgres() bool { return os.Getenv(EnvDB) == "postgres" }

// Location is what store.Open opens for a new test database of tb: a
// file in its temp dir, or a PostgreSQL URL under EnvDB.
func Location(tb testing.TB) string {
	tb.Helper()
	if OnPostgres() {
		return pgtest.URL(tb)
	}
	return filepath.Join(tb.TempDir(), "tuttid.db")
}

// Open opens a new migrated test database at Location; the caller closes it.
func Open(ctx context.Context, tb testing.TB) (*store.Store, error) {
	tb.Helper()
	return store.Open(ctx, Location(tb))
}
