// Package session is the agent-session domain: workspaces, sessions,
// turns and messages, the commands on them, and the ingestion of what the
// provider reports. It has no GraphQL in it; the transports translate to
// it. What the transports read is package sessionread (the commands look
// sessions up through it); Codex's account is package account, which
// session asks before a turn (Accounts). A file's prefix says which job it
// serves:
//
//	commands_*  what a client asks: workspaces, start, send, steer,
//	            interrupt, update (rename, archive), delete, approvals
//	ingest_*    what the provider reports, stored durably
//	recover_*   settling at start what the previous run left running
//	read_*      what a command reads
//	store_*     row writes the others share (and the fork, in its
//	            transaction); stored changes and their events (changes)
//	input_*     checking and resolving what a client sends
//	runtime_*   what the runtime's answers mean here (errors, thread
//	            metadata, turn statuses)
//	code*       the code side of sessions (package codebranch, through Code)
//
// Service holds the commands; each job's own state is a type of its own
// (lanes, owner, changes, approvalRows, pendingTurns). Mechanisms it uses
// live in packages of their own: keylock, sqlbatch, validate.
package session

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"tuttid/activity"
	"tuttid/agent"
	"tuttid/ent"
	"tuttid/keylock"
	"tuttid/sessionread"
	"tuttid/store"
)

// Service runs session operations against the store and the runtime.
type Service struct {
	store     *store.Store
	rt        agent.Runtime
	approvals approvalRows // commands_approvals.go
	pending   pendingTurns // store_turn_pending.go
	// changes writes stored changes and hands on their events, through
	// the outbox when there is one (store_outbox.go).
	changes changes
	// read is the read model; commands look sessions and turns up there.
	read  *sessionread.Reader
	log   *slog.Logger
	now   func() time.Time
	newID func() string
	// instanceID owns the sessions this service starts; Reconcile settles
	// only those (several instances may share the database).
	instanceID string
	own        owner // filters what Reconcile settles (recover_owned.go)
	guards     keylock.Locks
	// sessionLocks: LockSession and ShareSession, by session id.
	sessionLocks keylock.RWLocks
	lanes        lanes // ingestion's per-thread lanes (ingest_lanes.go)
	// accounts refuses what Codex could not run (package account).
	accounts Accounts
	// code is the code side: the session's files at its start and turn
	// ends, its worktree through archive, restore and delete, the cwd rule
	// (code*.go); nil: none.
	code Code
	// turnEnded is told of each turn stored ended (Config.TurnEnded).
	turnEnded func(ctx context.Context, a *ent.AgentSession, t *ent.Turn)
	// crash is the crash tests' hook (crash.go); a no-op when unset.
	crash func(point string)
}

// Config wires a Service.
type Config struct {
	Store     *store.Store
	Runtime   agent.Runtime
	Publisher activity.Publisher
	// Outbox, when set (PostgreSQL: the feed shared by the instances),
	// stages the events of a stored change in its transaction, so that a
	// process killed after the commit does not lose them; nil: they are
	// published after the commit (store_outbox.go).
	Outbox activity.Outbox
	Logger *slog.Logger
	// Code is the code side of sessions (codebranch.Service.Hooks); nil:
	// sessions have none.
	Code Code
	// Now and NewID are for tests; they default to time.Now and UUIDv7.
	Now   func() time.Time
	NewID func() string
	// InstanceID is this tuttid instance (package instance): it owns the
	// sessions it starts, and Reconcile touches only those.
	InstanceID string
	// Accounts checks sign-in and model settings before a turn and takes
	// the account notifications (*account.Service); nil: nothing is
	// refused, and the notifications are dropped.
	Accounts Accounts
	// TurnEnded, when set, is called after a turn is stored ended and its
	// events are out (the session READY), on the ingestion's goroutine: it
	// must hand long work off (package explore runs a branch's check).
	TurnEnded func(ctx context.Context, a *ent.AgentSession, t *ent.Turn)
	// Crash, for the crash tests only, is called at each crash point
	// (crash.go) and may kill the process there.
	Crash func(point string)
}

// New returns a Service.
func New(cfg Config) *Service {
	s := &Service{store: cfg.Store, rt: cfg.Runtime, changes: changes{store: cfg.Store, outbox: cfg.Outbox, pub: cfg.Publisher}, read: sessionread.New(sessionread.Config{Store: cfg.Store}), log: cfg.Logger, now: cfg.Now, newID: cfg.NewID,
		instanceID: cfg.InstanceID, accounts: cfg.Accounts, code: cfg.Code, turnEnded: cfg.TurnEnded, crash: cfg.Crash}
	if s.log == nil {
		s.log = slog.Default()
	}
	s.own = owner(s.instanceID)
	s.lanes.store = s.storeEvent
	// now and newID are read at each call: tests set them after New.
	now := func() time.Time { return s.now() }
	s.approvals = approvalRows{store: cfg.Store, changes: &s.changes, now: now, own: s.own}
	s.pending = pendingTurns{db: cfg.Store, guards: &s.guards, log: s.log, now: now, newID: func() string { return s.newID() }}
	if s.crash == nil {
		s.crash = func(string) {}
	}
	if s.accounts == nil {
		s.accounts = noAccounts{}
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.newID == nil {
		s.newID = NewID
	}
	return s
}

// LockSession serializes the operations on one session that must not
// interleave (a send, a delete, a fork of it) within this process, until
// the returned func is called.
func (s *Service) LockSession(sessionID string) (unlock func()) {
	return s.sessionLocks.Lock(sessionID)
}

// ShareSession holds the session against sends, as LockSession does, but
// together with other holders of ShareSession: the forks of one parent
// that each work in a worktree of their own (an exploration's branches),
// whose threads a settle tells apart by their cwd.
func (s *Service) ShareSession(sessionID string) (unlock func()) {
	return s.sessionLocks.RLock(sessionID)
}

// NewID returns a time-ordered UUIDv7, the same form Codex uses for threads.
func NewID() string { return uuid.Must(uuid.NewV7()).String() }
