// Package pgtest gives tests a real PostgreSQL database: a fresh database
// per test on one throwaway cluster per test binary, made with Debian's
// initdb and postgres on a unix socket in a temp dir, or on the server
// TUTTID_TEST_POSTGRES names (a URL whose user may create databases).
//
// Without PostgreSQL a test is skipped, and fails under CI (env CI set).
// As root the cluster runs as the postgres user (or nobody): initdb
// refuses root.
//
// The cluster is started by the first test that asks and lives as long as
// the test binary: a shell beside it waits on a pipe from the binary and,
// when the pipe closes (the binary exited, however it ended), stops the
// server and removes its directory. This package is test support: its one
// package-level value is that lazily started cluster.
package pgtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx"
)

// EnvServer names an existing server to use instead of a cluster of our
// own: postgres://user@host:port/db?sslmode=disable.
const EnvServer = "TUTTID_TEST_POSTGRES"

// server is the PostgreSQL the test binary uses, started once.
type server struct {
	once  sync.Once
	admin *sql.DB  // connected to the server's maintenance database
	base  *url.URL // the admin URL; test databases change its path
	err   error
	skip  bool // PostgreSQL is not installed (not an error unless CI)
	n     atomic.Int64
	// watchdog is the watchdog's stdin, never closed: it closes when the
	// test binary exits, and that is the watchdog's signal.
	watchdog io.WriteCloser
}

var shared server

// URL returns the URL of a new, empty database for t, dropped when t ends.
func URL(t testing.TB) string {
	t.Helper()
	shared.once.Do(shared.start)
	if shared.err != nil {
		if shared.skip && os.Getenv("CI") == "" {
			t.Skipf("PostgreSQL: %v", shared.err)
		}
		t.Fatalf("PostgreSQL: %v", shared.err)
	}
	name := fmt.Sprintf("tuttid_test_%d_%d", os.Getpid(), shared.n.Add(1))
	ctx := context.Background()
	// FILE_COPY: a copy of the empty template's files, much faster than
	// PostgreSQL 15's default (WAL_LOG) on a cluster without fsync.
	if _, err := shared.admin.ExecContext(ctx, `CREATE DATABASE `+name+` STRATEGY = FILE_COPY`); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		if _, err := shared.admin.ExecContext(ctx, `DROP DATABASE `+name+` WITH (FORCE)`); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	u := *shared.base
	u.Path = "/" + name
	return u.String()
}

func (s *server) start() {
	raw := os.Getenv(EnvServer)
	if raw == "" {
		raw, s.err = s.startCluster()
		if s.err != nil {
			return
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		s.err = fmt.Errorf("%s does not parse", EnvServer)
		return
	}
	s.base = u
	s.admin, s.err = connect(raw)
}

// connect waits up to 30 s for the server to answer.
func connect(raw string) (*sql.DB, error) {
	db, err := sql.Open("pgx", raw)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err = db.PingContext(ctx)
		cancel()
		if err == nil {
			return db, nil
		}
		if time.Now().After(deadline) {
			db.Close()
			return nil, fmt.Errorf("the server does not answer: %w", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// binDir is the newest /usr/lib/postgresql/*/bin holding initdb.
func binDir() (string, error) {
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(found) == 0 {
		return "", errors.New("no /usr/lib/postgresql/*/bin/initdb (apt-get install postgresql)")
	}
	slices.SortFunc(found, func(a, b string) int { return version(a) - version(b) })
	return filepath.Dir(found[len(found)-1]), nil
}

func version(initdb string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return v
}

// account is who runs the cluster: ourselves, or, as root, the postgres
// user (Debian's package makes it) or nobody.
func account() (*syscall.Credential, error) {
	if os.Getuid() != 0 {
		return nil, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
	}
	return nil, errors.New("running as root, and neither a postgres nor a nobody user to run initdb as")
}

// watchdog runs the server until its stdin closes, then stops it and
// removes the cluster's directory ($1).
const watchdog = `"$2/postgres" -D "$1/data" -k "$1" -c listen_addresses= -c fsync=off \
  -c synchronous_commit=off -c full_page_writes=off -c max_connections=500 >"$1/server.log" 2>&1 &
pid=$!
cat >/dev/null
kill -INT "$pid"; wait "$pid"; rm -rf "$1"`

// startCluster makes and starts a cluster and returns its admin URL.
func (s *server) startCluster() (string, error) {
	bin, err := binDir()
	if err != nil {
		s.skip = true
		return "", err
	}
	cred, err := account()
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "tuttid-pg-")
	if err != nil {
		return "", err
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			os.RemoveAll(dir)
			return "", err
		}
	}
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", filepath.Join(dir, "data"), "-A", "trust",
		"-U", "postgres", "-E", "UTF8", "--locale=C", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("initdb: %w: %s", err, out)
	}
	run := exec.Command("/bin/sh", "-c", watchdog, "pgtest", dir, bin)
	run.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true}
	stdin, err := run.StdinPipe()
	if err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	if err := run.Start(); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("start postgres: %w", err)
	}
	s.watchdog = stdin
	return "postgres://postgres@/postgres?host=" + url.QueryEscape(dir) + "&sslmode=disable", nil
}
