package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"tuttid/ent"
)

// OpenReadOnly opens an existing database file for reading beside a
// running server: no file is created, nothing is migrated, and the
// connection refuses writes (query_only).
func OpenReadOnly(ctx context.Context, path string) (*Store, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	db, err := sql.Open("sqlite", DSN(path)+"&_pragma=query_only(1)")
	if err != nil {
		return nil, fmt.Errorf("%w: open: %w", ErrUnavailable, err)
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("%w: open: %w", ErrUnavailable, err)
	}
	return &Store{Client: ent.NewClient(ent.Driver(entsql.OpenDB(dialect.SQLite, db))), DB: db}, nil
}
