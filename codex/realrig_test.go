package codex

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
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
	// forkLog keeps what the fork service logs of each fork's phases.
	forkLog *forkPhases
}

// forkPhases is a slog handler that keeps the store_ms of the last
// "session forked" record (the time from the provider's answer to the
// child's commit) and drops every record.
type forkPhases struct {
	mu      sync.Mutex
	storeMS int64
}

func (h *forkPhases) Enabled(context.Context, slog.Level) bool { return true }
func (h *forkPhases) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *forkPhases) WithGroup(string) slog.Handler            { return h }
func (h *forkPhases) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "session forked" {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "store_ms" {
			h.mu.Lock()
			h.storeMS = a.Value.Int64()
			h.mu.Unlock()
		}
		return true
	})
	return nil
}

// lastStore is the store phase of the last fork.
func (h *forkPhases) lastStore() time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return time.Duration(h.storeMS) * time.Millisecond
}

// startRealRig starts the rig; requestTimeout, when not zero, bounds each
// call to Codex (the default otherwise).
func startRealRig(tb testing.TB, model *codextest.ModelServer, requestTimeout time.Duration) *realRig {
	tb.Helper()
	return startRealRigOn(tb, model, requestTimeout, filepath.Join(tb.TempDir(), "tuttid.db"))
}

// startRealRigOn is startRealRig on the database at db (a SQLite file or a
// PostgreSQL URL).
func startRealRigOn(tb testing.TB, model *codextest.ModelServer, requestTimeout time.Duration, db string) *realRig {
	tb.Helper()
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	g := &realRig{home: codextest.NewCodexHome(tb, model.URL()), dbPath: db}
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
	g.forkLog = &forkPhases{}
	g.forks = fork.New(fork.Config{Store: st, Sessions: g.sessions, Runtime: g.rt, Logger: slog.New(g.forkLog)})
	if err := st.Client.Workspace.Create().SetID("w").SetName("w").SetRootPath(tb.TempDir()).Exec(ctx); err != nil {
		tb.Fatal(err)
	}
	return g
}
