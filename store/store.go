// Package store opens tuttid's database, a SQLite file or PostgreSQL (postgres.go), and migrates its schema.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" driver

	"tuttid/ent"
)

// ErrUnavailable wraps failures to open or migrate the database.
var ErrUnavailable = errors.New("storage unavailable")

// uriPath escapes what a file: URI would otherwise read as its query,
// fragment or an escape.
var uriPath = strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23")

// dsn is the connection string for a database file: foreign keys on, WAL,
// a busy timeout, and immediate transactions, since a deferred transaction
// that upgrades from read to write fails with SQLITE_BUSY under contention
// whatever the busy timeout. The timeout is long because a fork stores the
// child's whole history in one transaction: on an 80 MB session other
// writers waited 5 s for it on a loaded machine, and should wait, not fail.
func dsn(path string) string {
	q := url.Values{}
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "busy_timeout(30000)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "wal_autocheckpoint(0)") // the store checkpoints (checkpoint.go)
	q.Add("_pragma", fmt.Sprintf("journal_size_limit(%d)", journalSizeLimit))
	q.Set("_txlock", "immediate")
	// Times are written in one zone and one format so that SQL compares
	// them in time order (the driver's default keeps the zone name and
	// monotonic clock reading).
	q.Set("_time_format", "sqlite")
	q.Set("_timezone", "UTC")
	return "file:" + uriPath.Replace(path) + "?" + q.Encode()
}

// DefaultPath is the database file in the user's data directory
// ($XDG_DATA_HOME/tuttid, or ~/.local/share/tuttid).
func DefaultPath() (string, error) {
	dir := os.Getenv("XDG_DATA_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("find the data directory: %w", err)
		}
		dir = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(dir, "tuttid", "tuttid.db"), nil
}

// Store is an open database.
type Store struct {
	Client *ent.Client
	DB     *sql.DB
	lock   *serverLock // Exclusive only
	path   string
	gate   *walGate // paused by BoundWAL's checkpoints
	// stopCheckpoints ends the store's checkpoints (checkpoint.go) and
	// waits for them; nil when it runs none.
	stopCheckpoints func()
}

// Option changes what Open may do to the database file.
type Option int

const (
	// MustExist refuses a missing file instead of creating one: a command
	// run beside the server must not leave a database where there was none.
	MustExist Option = 1 << iota
	// ReadOnly implies MustExist, refuses writes on the connection
	// (query_only) and does not migrate: reading beside a running server.
	ReadOnly
	// Exclusive takes the server lock (LockFile) for as long as the store
	// is open, and fails with ErrInUse, naming the holder's pid, when
	// another process has it: one server per database. tuttid tree and
	// orphans do not ask for it, so they work beside a server.
	Exclusive
)

// Open opens the database file at path, the only way tuttid opens its
// database. By default it creates a missing file (and its directory)
// readable by its owner only and migrates the schema; opts change that.
// A file (or -wal, -shm file) of another user, or one that others may
// write, is refused (CheckOwned).
// A postgres:// or postgresql:// URL in place of path opens PostgreSQL.
func Open(ctx context.Context, path string, opts ...Option) (*Store, error) {
	var o Option
	for _, opt := range opts {
		o |= opt
	}
	if IsPostgresURL(path) { // path is a URL: store/postgres.go
		return openPostgres(ctx, path, o)
	}
	d := dsn(path)
	switch {
	case o&(MustExist|ReadOnly) != 0:
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
		}
	default:
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("%w: create %s: %w", ErrUnavailable, filepath.Dir(path), err)
		}
		if err := createPrivate(path); err != nil {
			return nil, fmt.Errorf("%w: create %s: %w", ErrUnavailable, path, err)
		}
	}
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		if err := checkOwnedIfExists("the database file", f); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
		}
	}
	if o&ReadOnly != 0 {
		d += "&_pragma=query_only(1)"
	}
	var lock *serverLock
	if o&Exclusive != 0 {
		l, err := lockServer(path)
		if err != nil {
			return nil, err
		}
		lock = l
	}
	db, err := sql.Open("sqlite", d)
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("%w: open: %w", ErrUnavailable, err)
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		lock.Close()
		return nil, fmt.Errorf("%w: open: %w", ErrUnavailable, err)
	}
	gate := &walGate{}
	client := ent.NewClient(ent.Driver(gatedDriver{Driver: entsql.OpenDB(dialect.SQLite, db), gate: gate}))
	if o&ReadOnly == 0 {
		if err := client.Schema.Create(ctx); err != nil {
			client.Close()
			lock.Close()
			return nil, fmt.Errorf("%w: migrate: %w", ErrUnavailable, err)
		}
	}
	st := &Store{Client: client, DB: db, lock: lock, path: path, gate: gate}
	if o&ReadOnly == 0 {
		cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		done := make(chan struct{})
		go st.checkpoints(cctx, done)
		st.stopCheckpoints = func() { cancel(); <-done }
	}
	return st, nil
}

// createPrivate creates the database file readable by its owner only,
// whatever the umask: it holds every conversation and command output.
// SQLite gives its -wal and -shm files the database file's mode. A file
// that exists is left as it is.
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return f.Close()
}

// Ping checks the database answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.DB.PingContext(ctx); err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return nil
}

// Close closes the database, then releases the server lock.
func (s *Store) Close() error {
	if s.stopCheckpoints != nil {
		s.stopCheckpoints()
	}
	err := s.Client.Close()
	return errors.Join(err, s.lock.Close())
}

// WithTx runs fn in one transaction, committing when it returns nil.
func (s *Store) WithTx(ctx context.Context, fn func(tx *ent.Tx) error) error {
	tx, err := s.Client.Tx(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		if rerr := tx.Rollback(); rerr != nil {
			return errors.Join(err, fmt.Errorf("rollback: %w", rerr))
		}
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}
