// Package session is the agent-session domain: workspaces, sessions,
// turns and messages, and the ingestion of what the provider reports. It
// has no GraphQL in it; the transports translate to it. A file's prefix
// says which job it serves:
//
//	commands_*  what a client asks: workspaces, start, send, interrupt,
//	            update (rename, archive), delete, approvals
//	ingest_*    what the provider reports, stored durably
//	recover_*   settling at start what the previous run left running
//	read_*      the read model the transports page through
//	store_*     row writes the others share (and the fork, in its transaction)
//	input_*     checking and resolving what a client sends
//	runtime_*   what the runtime's answers mean here (errors, thread
//	            metadata, turn statuses)
//
// Mechanisms it uses live in packages of their own: keylock, sqlbatch,
// validate, paging.
package session

import (
	"context"
	"log/slog"
	"time"

	"tuttid/activity"
	"tuttid/agent"
	"tuttid/keylock"
	"tuttid/store"

	"github.com/google/uuid"
)

// Service runs session operations against the store and the runtime.
type Service struct {
	store *store.Store
	rt    agent.Runtime
	pub   activity.Publisher
	// outbox, when set, keeps a stored change's events with its
	// transaction (store_outbox.go).
	outbox activity.Outbox
	sub    Subscriber
	log    *slog.Logger
	now    func() time.Time
	newID  func() string
	// instanceID owns the sessions this service starts; Reconcile settles
	// only those (several instances may share the database).
	instanceID string
	guards     keylock.Locks
	lanes      lanes // ingestion's per-thread lanes (ingest_lanes.go)
	// loginCancels: logins cancelled through tuttid, whose completion is
	// not a failure (login_cancels.go).
	loginCancels loginCancels
	// code is the code side: the session's files at its start and turn
	// ends, its worktree through archive, restore and delete, the cwd rule
	// (code*.go); nil: none.
	code Code
	// crash is the crash tests' hook (crash.go); nil: none.
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
	// Subscriber serves subscriptions to the activity (nil: none).
	Subscriber Subscriber
	Logger     *slog.Logger
	// Code is the code side of sessions (codebranch.Service.Hooks); nil:
	// sessions have none.
	Code Code
	// Now and NewID are for tests; they default to time.Now and UUIDv7.
	Now   func() time.Time
	NewID func() string
	// InstanceID is this tuttid instance (package instance): it owns the
	// sessions it starts, and Reconcile touches only those.
	InstanceID string
	// Crash, for the crash tests only, is called at each crash point
	// (crash.go) and may kill the process there.
	Crash func(point string)
}

// New returns a Service.
func New(cfg Config) *Service {
	s := &Service{store: cfg.Store, rt: cfg.Runtime, pub: cfg.Publisher, outbox: cfg.Outbox, sub: cfg.Subscriber, log: cfg.Logger, now: cfg.Now, newID: cfg.NewID,
		instanceID: cfg.InstanceID, code: cfg.Code, crash: cfg.Crash}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.newID == nil {
		s.newID = NewID
	}
	return s
}

func (s *Service) publish(ctx context.Context, e activity.Event) {
	if s.pub != nil {
		s.pub.Publish(ctx, e)
	}
}

// LockSession serializes the operations on one session that must not
// interleave (a send, a delete, a fork of it) within this process, until
// the returned func is called.
func (s *Service) LockSession(sessionID string) (unlock func()) { return s.guards.Lock(sessionID) }

// NewID returns a time-ordered UUIDv7, the same form Codex uses for threads.
func NewID() string { return uuid.Must(uuid.NewV7()).String() }
