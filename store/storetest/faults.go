package storetest

import (
	"context"
	"errors"
	"fmt"

	"tuttid/store"
)

// FailWrites makes op ("INSERT", "UPDATE" or "DELETE") on table fail with
// "injected" while it is in place, for the rows that match when (a
// condition on NEW, or "" for every row): a real failing statement in a
// real transaction, on either backend (a trigger: SQLite's RAISE(ABORT),
// PostgreSQL's RAISE EXCEPTION). name must be a plain identifier. The
// function returned removes it; it may be called from a timer.
func FailWrites(ctx context.Context, st *store.Store, name, op, table, when string) (remove func() error, err error) {
	var create, drop []string
	switch st.Dialect() {
	case store.SQLite:
		cond := ""
		if when != "" {
			cond = " WHEN " + when
		}
		create = []string{fmt.Sprintf(`CREATE TRIGGER %s BEFORE %s ON %s%s BEGIN SELECT RAISE(ABORT, 'injected'); END`, name, op, table, cond)}
		drop = []string{`DROP TRIGGER ` + name}
	case store.Postgres:
		cond := ""
		if when != "" {
			cond = " WHEN (" + when + ")"
		}
		create = []string{
			fmt.Sprintf(`CREATE FUNCTION %s() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'injected'; END$$`, name),
			fmt.Sprintf(`CREATE TRIGGER %s BEFORE %s ON %s FOR EACH ROW%s EXECUTE FUNCTION %s()`, name, op, table, cond, name),
		}
		drop = []string{fmt.Sprintf(`DROP TRIGGER %s ON %s`, name, table), fmt.Sprintf(`DROP FUNCTION %s()`, name)}
	default:
		return nil, fmt.Errorf("storetest: no fault injection for dialect %q", st.Dialect())
	}
	for _, q := range create {
		if _, err := st.DB.ExecContext(ctx, q); err != nil {
			return nil, fmt.Errorf("inject a fault: %w", err)
		}
	}
	return func() error {
		var errs []error
		for _, q := range drop {
			if _, err := st.DB.ExecContext(context.WithoutCancel(ctx), q); err != nil {
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	}, nil
}

// WriteLockFree reports whether a write transaction could start now
// without waiting for another: on SQLite, BEGIN IMMEDIATE with no busy
// timeout; on PostgreSQL, a try of the advisory lock every write
// transaction holds (store.WriteLockKey).
func WriteLockFree(ctx context.Context, st *store.Store) (bool, error) {
	conn, err := st.DB.Conn(ctx)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	switch st.Dialect() {
	case store.SQLite:
		// The connection goes back to the pool: its busy timeout too.
		defer conn.ExecContext(context.WithoutCancel(ctx), "PRAGMA busy_timeout = 30000")
		if _, err := conn.ExecContext(ctx, "PRAGMA busy_timeout = 0"); err != nil {
			return false, err
		}
		if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
			return false, nil // SQLITE_BUSY: another holds the write lock
		}
		_, err := conn.ExecContext(ctx, "ROLLBACK")
		return true, err
	case store.Postgres:
		var free bool
		if err := conn.QueryRowContext(ctx, "SELECT pg_try_advisory_lock($1)", store.WriteLockKey).Scan(&free); err != nil {
			return false, err
		}
		if free {
			_, err = conn.ExecContext(ctx, "SELECT pg_advisory_unlock($1)", store.WriteLockKey)
		}
		return free, err
	}
	return false, fmt.Errorf("storetest: no write lock probe for dialect %q", st.Dialect())
}
