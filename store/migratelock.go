package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"time"
)

// MigrationLockKey is the key of the session-level PostgreSQL advisory
// lock held while an instance migrates the schema. ent plans a migration
// from what it inspects, then applies it: two instances started at once on
// an empty database both plan CREATE TABLE and the second fails with
// `relation ... already exists`. Under the lock the second inspects after
// the first committed and finds nothing to do. It differs from
// WriteLockKey (every write transaction's, which the migration's own
// transaction takes too) and from the activity feed's schema lock.
const MigrationLockKey int64 = 0x7474_6d69_6772 // "ttmigr"

// lockMigration takes MigrationLockKey on one connection of db, waiting for
// an instance that holds it as long as ctx lets it, and returns the
// function that releases it. The wait is not bounded by lock_timeout (30 s,
// meant for rows): a migration that rewrites a large table may take longer,
// and the instance waiting for it should come up after it, not exit.
func lockMigration(ctx context.Context, db *sql.DB) (release func(), err error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("the migration lock: %w", err)
	}
	// A session-level lock taken inside a transaction outlives its commit;
	// SET LOCAL ends with it, so the pooled connection keeps its own
	// lock_timeout.
	tx, err := conn.BeginTx(ctx, nil)
	if err == nil {
		_, err = tx.ExecContext(ctx, `SET LOCAL lock_timeout = 0`)
		if err == nil {
			_, err = tx.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, MigrationLockKey)
		}
		if err == nil {
			err = tx.Commit()
		} else {
			err = errors.Join(err, tx.Rollback())
		}
	}
	if err != nil {
		discard(conn) // it may hold the lock all the same: its session ends
		return nil, fmt.Errorf("the migration lock: %w", err)
	}
	return func() {
		// Released even when ctx has ended; if it cannot be, the
		// connection is closed, and its session's locks go with it.
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		var released bool
		if err := conn.QueryRowContext(uctx, `SELECT pg_advisory_unlock($1)`, MigrationLockKey).Scan(&released); err != nil || !released {
			discard(conn)
			return
		}
		conn.Close()
	}, nil
}

// discard closes conn's connection instead of returning it to the pool.
func discard(conn *sql.Conn) {
	conn.Raw(func(any) error { return driver.ErrBadConn })
	conn.Close()
}
