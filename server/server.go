// Package server assembles tuttid: the store, the agent runtime, the
// services, and the HTTP surface (GraphQL, REST, GraphiQL, health). main
// and the integration tests start the same thing.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"tuttid/activity"
	"tuttid/agent"
	"tuttid/codex"
	"tuttid/fork"
	"tuttid/rest"
	"tuttid/session"
	"tuttid/store"
	"tuttid/web"
)

// Config configures a Server.
type Config struct {
	// DBPath is the SQLite file; DSN, when set, wins (tests use it).
	DBPath string
	DSN    string
	// CodexBin and CodexEnv start the codex app-server; CodexEnv nil
	// inherits the environment (CODEX_HOME among it).
	CodexBin string
	CodexEnv []string
	// Runtime replaces the Codex runtime (tests inject faults with it).
	Runtime agent.Runtime
	// AllowedOrigins are host patterns allowed to open a WebSocket from a
	// browser page besides the server's own host.
	AllowedOrigins []string
	Logger         *slog.Logger
	Version        string
}

// maxQueryBody bounds a GraphQL request body.
const maxQueryBody = 8 * session.MaxMessageLen

// DefaultAllowedOrigins lets pages on this machine subscribe.
func DefaultAllowedOrigins() []string {
	// Patterns are path.Match globs: the IPv6 brackets are escaped.
	return []string{"localhost", "localhost:*", "127.0.0.1", "127.0.0.1:*", `\[::1\]`, `\[::1\]:*`}
}

// Server is a running tuttid.
type Server struct {
	Store    *store.Store
	Runtime  agent.Runtime
	Broker   *activity.Broker
	Sessions *session.Service
	Forks    *fork.Service

	log     *slog.Logger
	handler http.Handler
	stop    context.CancelFunc
	wg      sync.WaitGroup
	closeRT func() error
}

// New opens the store, starts the runtime and the ingestion of its events.
// A runtime that fails to start is not fatal: tuttid serves reads and
// answers agent.runtime_unavailable until Codex comes up.
func New(ctx context.Context, cfg Config) (*Server, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	dsn := cfg.DSN
	if dsn == "" {
		if err := os.MkdirAll(filepath.Dir(cfg.DBPath), 0o700); err != nil {
			return nil, fmt.Errorf("create the database directory: %w", err)
		}
		dsn = store.DSN(cfg.DBPath)
	}
	st, err := store.OpenDSN(ctx, dsn)
	if err != nil {
		return nil, err
	}
	s := &Server{Store: st, log: log, closeRT: func() error { return nil }}
	s.Runtime = cfg.Runtime
	if s.Runtime == nil {
		rt := codex.New(codex.Config{Bin: cfg.CodexBin, Env: cfg.CodexEnv, Logger: log, ClientVersion: cfg.Version,
			// planMode reaches Codex as its (experimental) plan collaboration mode.
			ExperimentalPlanMode: true})
		if err := rt.Launch(ctx); err != nil {
			log.WarnContext(ctx, "codex app-server unavailable; retrying in the background", "err", err)
		}
		s.Runtime, s.closeRT = rt, rt.Close
	}
	s.Broker = activity.New(activity.Options{Logger: log, FirstSeq: activity.EpochSeq(time.Now())})
	s.Sessions = session.New(session.Config{Store: st, Runtime: s.Runtime, Publisher: s.Broker, Logger: log})
	s.Forks = fork.New(fork.Config{Store: st, Sessions: s.Sessions, Runtime: s.Runtime, Publisher: s.Broker, Logger: log})

	if err := s.Sessions.Reconcile(ctx); err != nil {
		s.closeRT()
		st.Close()
		return nil, err
	}
	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	s.stop = stop
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.Sessions.Ingest(runCtx)
	}()

	origins := cfg.AllowedOrigins
	if origins == nil {
		origins = DefaultAllowedOrigins()
	}
	mux := http.NewServeMux()
	// A request body is bounded: the largest legitimate one is a message of
	// session.MaxMessageLen bytes, JSON-escaped.
	mux.Handle("/query", http.MaxBytesHandler(s.graphQL(origins), maxQueryBody))
	(&rest.Handler{Forks: s.Forks, Sessions: s.Sessions, Logger: log}).Register(mux)
	mux.HandleFunc("GET /healthz", s.health)
	mux.Handle("/app/", http.StripPrefix("/app", web.Handler()))
	mux.Handle("/", graphiqlHandler())
	s.handler = checkOrigin(mux, origins, log)
	return s, nil
}

// Handler is the server's HTTP handler.
func (s *Server) Handler() http.Handler { return s.handler }

// Serve answers HTTP on ln until ctx ends, then shuts down gracefully.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// Subscriptions end when the broker closes; then in-flight requests
	// get a bounded time to finish.
	s.Broker.Close()
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Close stops ingestion, the runtime and the store.
func (s *Server) Close() error {
	s.Broker.Close()
	rerr := s.closeRT()
	s.stop()
	s.wg.Wait()
	return errors.Join(rerr, s.Store.Close())
}

type healthBody struct {
	Status   string `json:"status"`
	Database string `json:"database"`
	Codex    string `json:"codex"`
	Error    string `json:"codexError,omitempty"`
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	body := healthBody{Status: "ok", Database: "ok", Codex: "ok"}
	status := http.StatusOK
	if err := s.Store.Ping(ctx); err != nil {
		body.Status, body.Database, status = "unavailable", "unavailable", http.StatusServiceUnavailable
	}
	if err := s.Runtime.Health(ctx); err != nil {
		body.Codex, body.Error = "unavailable", err.Error()
	}
	writeJSON(w, status, body)
}
