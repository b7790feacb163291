package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"tuttid/ent"
	"tuttid/ent/message"
)

// IsPostgresURL reports whether a --db value names a PostgreSQL database
// (postgres:// or postgresql://) rather than a SQLite file.
func IsPostgresURL(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// lockTimeout is PostgreSQL's counterpart of SQLite's busy timeout (see
// dsn): how long a statement waits for a lock (a row, or the write lock of
// serialTx) before it fails. A URL that sets lock_timeout keeps its own.
const lockTimeout = "30s"

// openPostgres opens the PostgreSQL database at url through pgx's
// database/sql driver and ent's postgres dialect. MustExist and ReadOnly
// refuse a database without tuttid's tables (nothing is created beside a
// running server); ReadOnly makes every transaction read-only and does
// not migrate.
func openPostgres(ctx context.Context, url string, o Option) (*Store, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		// pgx's message may quote the URL, password included: not shown.
		return nil, fmt.Errorf("%w: the PostgreSQL URL does not parse", ErrUnavailable)
	}
	if _, ok := cfg.RuntimeParams["lock_timeout"]; !ok {
		cfg.RuntimeParams["lock_timeout"] = lockTimeout
	}
	if o&ReadOnly != 0 {
		cfg.RuntimeParams["default_transaction_read_only"] = "on"
	}
	db := sql.OpenDB(textSafeConnector{stdlib.GetConnector(*cfg)}) // store/postgres_text.go
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("%w: open: %w", ErrUnavailable, err)
	}
	client := ent.NewClient(ent.Driver(serialTx{entsql.OpenDB(dialect.Postgres, db)}))
	if o&(MustExist|ReadOnly) != 0 {
		if err := hasSchema(ctx, db); err != nil {
			client.Close()
			return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
		}
	}
	if o&ReadOnly == 0 {
		if err := migratePostgres(ctx, client, db); err != nil {
			client.Close()
			return nil, fmt.Errorf("%w: migrate: %w", ErrUnavailable, err)
		}
	}
	return &Store{Client: client, DB: db}, nil
}

// migratePostgres migrates the schema under the migration lock, so that
// instances started at once on one database migrate one after the other
// (migratelock.go).
func migratePostgres(ctx context.Context, client *ent.Client, db *sql.DB) error {
	release, err := lockMigration(ctx, db)
	if err != nil {
		return err
	}
	defer release()
	if err := client.Schema.Create(ctx); err != nil {
		return err
	}
	return compressLZ4(ctx, db)
}

// lz4Columns are the columns whose values PostgreSQL compresses with lz4
// rather than its default pglz: a message's text and item JSON, the bulk
// of a history. pglz made a 16 MB fork 2.3x its time on SQLite; lz4
// (PostgreSQL 14 and later) 1.3-1.4x.
var lz4Columns = [][2]string{{message.Table, message.FieldText}, {message.Table, message.FieldContent}}

// compressLZ4 sets lz4Columns' compression where it is not lz4 yet (so
// that a start takes no table lock when nothing changes). A server that
// cannot (before 14, or built without lz4) keeps pglz.
func compressLZ4(ctx context.Context, db *sql.DB) error {
	var version int
	if err := db.QueryRowContext(ctx, `SELECT current_setting('server_version_num')::int`).Scan(&version); err != nil {
		return fmt.Errorf("read the server's version: %w", err)
	}
	if version < 140000 {
		return nil
	}
	for _, c := range lz4Columns {
		var method string
		err := db.QueryRowContext(ctx, `SELECT attcompression::text FROM pg_attribute WHERE attrelid = to_regclass($1) AND attname = $2`, c[0], c[1]).Scan(&method)
		if err != nil {
			return fmt.Errorf("read %s.%s's compression: %w", c[0], c[1], err)
		}
		if method == "l" {
			continue
		}
		_, err = db.ExecContext(ctx, fmt.Sprintf(`ALTER TABLE %s ALTER COLUMN %s SET COMPRESSION lz4`, c[0], c[1]))
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "0A000" { // feature_not_supported
			return nil // built without lz4
		}
		if err != nil {
			return fmt.Errorf("compress %s.%s with lz4: %w", c[0], c[1], err)
		}
	}
	return nil
}

// hasSchema fails unless the database holds tuttid's tables.
func hasSchema(ctx context.Context, db *sql.DB) error {
	var ok bool
	if err := db.QueryRowContext(ctx, `SELECT to_regclass('workspaces') IS NOT NULL`).Scan(&ok); err != nil {
		return fmt.Errorf("inspect the database: %w", err)
	}
	if !ok {
		return fmt.Errorf("the database has no tuttid tables")
	}
	return nil
}

// WriteLockKey is the key of the PostgreSQL advisory lock that each write
// transaction holds (serialTx); a probe may try it (pg_try_advisory_lock)
// to learn whether a write transaction is in progress.
const WriteLockKey int64 = 0x7475_7474_6964 // "tuttid"

// serialTx is ent's postgres driver whose read-write transactions run one
// at a time, as SQLite's `_txlock=immediate` transactions do (see dsn):
// each takes one transaction-scoped advisory lock first, released at
// commit or rollback. tuttid's transactions read, then write what they
// read (a session's status, the fork journal, version counters), and were
// written for SQLite, where no two write at once; under PostgreSQL's READ
// COMMITTED two of them could interleave. Statements outside a
// transaction, and read-only transactions, do not take it.
type serialTx struct{ *entsql.Driver }

func (d serialTx) Tx(ctx context.Context) (dialect.Tx, error) { return d.BeginTx(ctx, nil) }

func (d serialTx) BeginTx(ctx context.Context, opts *sql.TxOptions) (dialect.Tx, error) {
	tx, err := d.Driver.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	if opts != nil && opts.ReadOnly {
		return tx, nil
	}
	if err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", []any{WriteLockKey}, nil); err != nil {
		return nil, errors.Join(fmt.Errorf("take the write lock: %w", err), tx.Rollback())
	}
	return tx, nil
}

// Redact is a --db value fit for logs and messages: a PostgreSQL URL
// without its password (in the URL's user info or its password
// parameter); a file path as it is.
func Redact(db string) string {
	if !IsPostgresURL(db) {
		return db
	}
	u, err := url.Parse(db)
	if err != nil {
		return "postgres://(a URL that does not parse)"
	}
	if q := u.Query(); q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}
