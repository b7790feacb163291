package codex

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"tuttid/codex/codextest"
	"tuttid/fork"
	"tuttid/session"
	"tuttid/store"
)

// realRig is the real app-server, on model's replies, with what tuttid
// runs over it: a store with workspace "w", the session service ingesting
// the runtime's events, and the fork service. The package's fork tests and
// benchmarks on the real binary start from it.
type realRig struct {
	rt       *Runtime
	home     string // CODEX_HOME
	st       *store.Store
	dbPath   string
	sessions *session.Service
	forks    *fork.Service
}

// startRealRig starts the rig; requestTimeout, when not zero, bounds each
// call to Codex (the default otherwise).
func startRealRig(tb testing.TB, model *codextest.ModelServer, requestTimeout time.Duration) *realRig {
	tb.Helper()
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	g := &realRig{home: codextest.NewCodexHome(tb, model.URL()), dbPath: filepath.Join(tb.TempDir(), "tuttid.db")}
	g.rt = New(Config{Bin: codextest.Binary(tb), Env: append(os.Environ(), "CODEX_HOME="+g.home), Logger: quiet,
		RequestTimeout: requestTimeout})
	tb.Cleanup(func() { g.rt.Close() })
	if err := g.rt.Launch(ctx); err != nil {
		tb.Fatal(err)
	}
	st, err := store.Open(ctx, g.dbPath)
	if err != nil {
		tb.Fatal(err)
	}
	g.st = st
	tb.Cleanup(func() { st.Close() })
	ictx, stop := context.WithCancel(ctx)
	tb.Cleanup(stop)
	g.sessions = session.New(session.Config{Store: st, Runtime: g.rt, Logger: quiet})
	go g.sessions.Ingest(ictx)
	g.forks = fork.New(fork.Config{Store: st, Sessions: g.sessions, Runtime: g.rt, Logger: quiet})
	if err := st.Client.Workspace.Create().SetID("w").SetName("w").SetRootPath(tb.TempDir()).Exec(ctx); err != nil {
		tb.Fatal(err)
	}
	return g
}
