package pgfeed

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// schemaLockKey serializes the schema's creation between instances
// starting at once (two CREATE TABLE IF NOT EXISTS can collide).
const schemaLockKey int64 = 0x7475_7474_6163 // "ttac"

// The feed's tables live beside ent's but are not ent's: they exist only on
// PostgreSQL, and nothing but this package reads them.
const schema = `
CREATE TABLE IF NOT EXISTS activity_seqs (
	workspace_id text PRIMARY KEY,
	seq bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS activity_events (
	workspace_id text NOT NULL,
	seq bigint NOT NULL,
	id text NOT NULL,
	at timestamptz NOT NULL,
	payload bytea NOT NULL,
	PRIMARY KEY (workspace_id, seq)
);
CREATE UNIQUE INDEX IF NOT EXISTS activity_events_id ON activity_events (id);
CREATE TABLE IF NOT EXISTS activity_outbox (
	n bigserial PRIMARY KEY,
	id text NOT NULL UNIQUE,
	instance text NOT NULL,
	workspace_id text NOT NULL,
	payload bytea NOT NULL,
	created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
`

// migrate creates the feed's tables if they are missing.
func migrate(ctx context.Context, db *sql.DB) (err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("activity feed schema: %w", err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, tx.Rollback())
		}
	}()
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, schemaLockKey); err != nil {
		return fmt.Errorf("activity feed schema: lock: %w", err)
	}
	if _, err := tx.ExecContext(ctx, schema); err != nil {
		return fmt.Errorf("activity feed schema: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("activity feed schema: commit: %w", err)
	}
	return nil
}
