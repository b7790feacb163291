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
	"path/filepath"
	"strings"
	"sync"
	"time"

	"tuttid/account"
	"tuttid/activity"
	"tuttid/agent"
	"tuttid/codebranch"
	"tuttid/codex"
	"tuttid/ent"
	"tuttid/explore"
	"tuttid/fork"
	"tuttid/forward"
	"tuttid/instance"
	"tuttid/rest"
	"tuttid/sandbox"
	"tuttid/session"
	"tuttid/sessionread"
	"tuttid/store"
)

// Config configures a Server.
type Config struct {
	// DBPath is the SQLite file, opened with store.Open (created 0600).
	DBPath string
	// CodexBin and CodexEnv start the codex app-server; CodexEnv nil
	// inherits the environment (CODEX_HOME among it).
	CodexBin string
	CodexEnv []string
	// Runtime replaces the Codex runtime (tests inject faults with it).
	Runtime agent.Runtime
	// Addr is the listen address (--addr); its host is an allowed Host.
	Addr string
	// AllowedHosts are more names requests may carry in Host (and pages in
	// Origin) besides the loopback names and Addr's host: exact names or
	// *.example.com patterns.
	AllowedHosts []string
	// AllowedOrigins are host[:port] globs of more origins whose pages may
	// change state and open a WebSocket, besides tuttid's own origin.
	AllowedOrigins []string
	// Token is required on every API request unless NoAuth, which only
	// loopback listeners may use.
	Token  string
	NoAuth bool
	// MaxBody bounds a request body (0: DefaultMaxBody).
	MaxBody int64
	// BodyTimeout and IdleTimeout bound how long a connection may take
	// to send a request's body and stay idle between requests (0: the
	// defaults, DefaultBodyTimeout and DefaultIdleTimeout).
	BodyTimeout, IdleTimeout time.Duration
	Logger                   *slog.Logger
	Version                  string
	// InstanceID names this instance among those sharing the database
	// (default instance.DefaultID(Addr)); AdvertiseURL is where the others
	// reach it (default instance.DefaultAdvertiseURL(Addr)).
	InstanceID, AdvertiseURL string
	// DataDir holds what tuttid keeps beside the database (--data-dir):
	// the worktrees of WORKTREE forks and the sessions' kept indexes;
	// empty: the database file's directory, or the user's data directory
	// with PostgreSQL.
	DataDir string
	// MaxConcurrentTurns bounds the turns running at once on this
	// instance's Codex that an exploration's branch may start into (its
	// first turn waits in a queue past it); 0: the default (4), below 0:
	// no bound.
	MaxConcurrentTurns int
	// AgentNice is the nice value of the agent's work (--agent-nice): the
	// Codex app-server and so every command the agent runs, Explore's
	// checks, worktree setups; 0 keeps tuttid's own.
	AgentNice int
	// CrashAt names a crash point (fork.Crash*) where the process kills
	// itself with SIGKILL: for the crash tests only (TUTTID_CRASH_AT).
	CrashAt string
}

// Server is a running tuttid.
type Server struct {
	Store   *store.Store
	Runtime agent.Runtime
	// Broker is the activity feed: the in-process broker on SQLite, the
	// feed shared by the instances of the database on PostgreSQL.
	Broker   activity.Feed
	Sessions *session.Service
	// Reads is the read model the transports page through.
	Reads *sessionread.Reader
	// Accounts is Codex's account (sign-in, logins, models, rate limits).
	Accounts *account.Service
	Forks    *fork.Service
	// Instances is this instance's registration; forward carries commands
	// to the owners of other instances' sessions (nil on SQLite: one
	// instance per database).
	Instances *instance.Registry
	forward   *forward.Forwarder
	Code      *codebranch.Service
	// Explore runs explorations (forks of a turn N ways, checked, ranked).
	Explore *explore.Service

	log     *slog.Logger
	noAuth  bool
	idle    time.Duration
	routes  *router
	handler http.Handler
	stop    context.CancelFunc
	wg      sync.WaitGroup
	closeRT func() error
}

// New opens the store, starts the runtime and the ingestion of its events.
// A runtime that fails to start is not fatal: tuttid serves reads and
// answers agent.runtime_unavailable until Codex comes up.
//
// What it opens and starts is undone in reverse order when a later step
// fails (one cleanup stack): a failed reconcile leaves no store, feed
// (PostgreSQL's LISTEN connection) or Codex behind.
func New(ctx context.Context, cfg Config) (_ *Server, err error) {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	if cfg.NoAuth {
		if cfg.Addr != "" {
			if err := CheckNoAuth(cfg.Addr); err != nil {
				return nil, err
			}
		}
	} else if err := CheckToken(cfg.Token); err != nil {
		return nil, fmt.Errorf("--token: %w", err)
	}
	var undo cleanups
	defer func() {
		if err != nil {
			undo.run()
		}
	}()
	maxBody := cfg.MaxBody
	if maxBody <= 0 {
		maxBody = DefaultMaxBody
	}
	// One server per database (store.Exclusive): a second one's start-up
	// reconcile would take this one's running turns and forks for dead.
	st, err := store.Open(ctx, cfg.DBPath, store.Exclusive)
	if err != nil {
		return nil, err
	}
	undo.push(st.Close)
	s := &Server{Store: st, log: log, noAuth: cfg.NoAuth, closeRT: func() error { return nil }}
	id, adv := cfg.InstanceID, cfg.AdvertiseURL
	if id == "" {
		id = instance.DefaultID(cfg.Addr)
	}
	if adv == "" {
		adv = instance.DefaultAdvertiseURL(cfg.Addr)
	}
	s.Instances = instance.New(instance.Config{Client: st.Client, ID: id, AdvertiseURL: adv, Logger: log})
	// On SQLite this is the only instance: it owns everything, whatever id
	// an earlier run had. On PostgreSQL it takes what no instance owns.
	shared := store.IsPostgresURL(cfg.DBPath)
	if err := s.Instances.Register(ctx, !shared); err != nil {
		return nil, err
	}
	if shared {
		s.forward = forward.New(forward.Config{Client: st.Client, Registry: s.Instances, Token: cfg.Token, Logger: log})
	}
	s.Runtime = cfg.Runtime
	if s.Runtime == nil {
		rt := codex.New(codex.Config{Bin: cfg.CodexBin, Env: cfg.CodexEnv, Logger: log, ClientVersion: cfg.Version,
			// planMode reaches Codex as its (experimental) plan collaboration mode.
			ExperimentalPlanMode: true, OnSent: crashOnSent(cfg.CrashAt),
			RequireSignIn: true, Nice: cfg.AgentNice}) // a turn Codex cannot run fails at once: agent.provider_not_signed_in
		if err := rt.Launch(ctx); err != nil {
			log.WarnContext(ctx, "codex app-server unavailable; retrying in the background", "err", err)
		}
		s.Runtime, s.closeRT = rt, rt.Close
		undo.push(rt.Close)
	}
	if s.Broker, err = newFeed(ctx, cfg.DBPath, st, id, log); err != nil {
		return nil, err
	}
	undo.push(func() error { s.Broker.Close(); return nil })
	dataDir, err := DataDir(cfg.DataDir, cfg.DBPath)
	if err != nil {
		return nil, err
	}
	// Checks and worktree setups run in Codex's own sandbox (package
	// sandbox); its CODEX_HOME is tuttid's, not the person's.
	var confine *sandbox.Codex
	if cfg.CodexBin != "" {
		confine = sandbox.NewCodex(cfg.CodexBin, filepath.Join(dataDir, "sandbox"))
	}
	s.Code = codebranch.New(codebranch.Config{Store: st, DataDir: dataDir, Publisher: s.Broker, Logger: log, AgentNice: cfg.AgentNice,
		Sandbox: confine, InstanceID: id})
	s.Accounts = account.New(account.Config{Runtime: s.Runtime, Logger: log})
	// A turn's end frees a slot of Explore's turn bound and runs a
	// branch's check; Explore is made after the services it uses.
	turnEnded := func(ctx context.Context, a *ent.AgentSession, t *ent.Turn) {
		if s.Explore != nil {
			s.Explore.TurnEnded(ctx, a, t)
		}
	}
	s.Sessions = session.New(session.Config{Store: st, Runtime: s.Runtime, Publisher: s.Broker, Outbox: outboxOf(s.Broker), Logger: log,
		InstanceID: id, Accounts: s.Accounts, Code: s.Code.Hooks(), TurnEnded: turnEnded, Crash: crashAt(cfg.CrashAt)})
	s.Reads = sessionread.New(sessionread.Config{Store: st, Subscriber: s.Broker})
	s.Forks = fork.New(fork.Config{Store: st, Sessions: s.Sessions, Reads: s.Reads, Accounts: s.Accounts, Runtime: s.Runtime, Logger: log,
		Crash: crashAt(cfg.CrashAt), InstanceID: id, Code: s.Code})
	maxTurns := cfg.MaxConcurrentTurns
	if maxTurns == 0 {
		maxTurns = explore.DefaultMaxConcurrentTurns
	}
	s.Explore = explore.New(explore.Config{Store: st, Forks: s.Forks, Sessions: s.Sessions, Code: s.Code, Publisher: s.Broker,
		Logger: log, InstanceID: id, MaxConcurrentTurns: max(maxTurns, 0), AgentNice: cfg.AgentNice, Sandbox: confine, Crash: crashAt(cfg.CrashAt)})
	undo.push(func() error { s.Explore.Close(); return nil })

	// Applies a crash cut short: their targets' files put back before
	// anything reads or checkpoints them.
	if err := s.Code.ReconcileApplies(ctx); err != nil {
		return nil, err
	}
	if err := s.Sessions.Reconcile(ctx); err != nil {
		return nil, err
	}
	// Forks a crash cut short: their threads are archived and listed.
	if err := s.Forks.Reconcile(ctx); err != nil {
		return nil, err
	}
	// Explorations a stop cut short: branches forked again, checks run
	// again, the queue started.
	if err := s.Explore.Reconcile(ctx); err != nil {
		return nil, err
	}
	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	s.stop = stop
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.Sessions.Ingest(runCtx)
	}()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.Instances.Run(runCtx)
	}()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		st.BoundWAL(runCtx, store.DefaultWALCheckEvery, store.DefaultWALTruncateOver, log)
	}()

	origins := cfg.AllowedOrigins
	hosts := newHostPolicy(cfg.Addr, cfg.AllowedHosts)
	// Forwarded commands carry the owner's advertise host.
	hosts.instances = s.Instances.AllowsHost
	a := newAuth(cfg.Token, cfg.NoAuth, log)
	s.routes = s.newRouter(a, maxBody)
	// Outside in: the headers every answer carries, the body's time bound,
	// the Host (DNS rebinding), the Origin (other sites'
	// pages), then each route's own checks (routes.go).
	bodyTimeout := cfg.BodyTimeout
	if bodyTimeout <= 0 {
		bodyTimeout = DefaultBodyTimeout
	}
	s.idle = cfg.IdleTimeout
	if s.idle <= 0 {
		s.idle = DefaultIdleTimeout
	}
	s.handler = answerHeaders(bodyDeadline(checkHost(checkOrigin(s.routes, hosts, origins, log), hosts, log), bodyTimeout))
	return s, nil
}

// Serve answers HTTP on ln until ctx ends, then shuts down gracefully.
// With --no-auth, ln must be a loopback listener.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if s.noAuth {
		if err := CheckNoAuth(ln.Addr().String()); err != nil {
			return err
		}
	}
	hs := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: DefaultReadHeaderTimeout,
		IdleTimeout:       s.idle,
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
	s.Explore.Close()
	rerr := s.closeRT()
	s.stop()
	s.wg.Wait()
	// The sessions' kept indexes still being refreshed: a few git calls.
	wctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	werr := s.Code.Wait(wctx)
	return errors.Join(rerr, werr, s.Store.Close())
}

type healthBody struct {
	Status   string `json:"status"`
	Database string `json:"database"`
	Codex    string `json:"codex"`
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
		// The cause goes to the log: /healthz needs no token.
		s.log.DebugContext(ctx, "health: codex unavailable", "err", err)
		body.Codex = "unavailable"
	}
	rest.WriteJSON(w, status, body)
}

// CheckNoAuth is the one --no-auth rule: no token check only on a
// listener that is loopback (addr host:port).
func CheckNoAuth(addr string) error {
	if !IsLoopbackAddr(addr) {
		return fmt.Errorf("--no-auth is only allowed when listening on loopback (127.0.0.1, [::1], localhost), not on %s", addr)
	}
	return nil
}

// IsLoopbackAddr reports whether addr (host:port) listens on loopback only:
// localhost or a loopback IP; an empty host (every interface) is not.
func IsLoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
