// Package fork runs the session fork saga of the design's Service Flow:
// validate, replay a completed request, fork the provider thread, spool
// the provider's history of the child to local disk, then store the child,
// its lineage and its history in one transaction. It has no GraphQL in
// it; GraphQL and REST translate to it.
package fork

import (
	"context"
	"log/slog"
	"time"

	"tuttid/agent"
	"tuttid/ent"
	"tuttid/keylock"
	"tuttid/session"
	"tuttid/sessionread"
	"tuttid/store"
)

// Input is a fork request.
type Input struct {
	WorkspaceID string
	// ParentSessionID is the session forked (the API's agentSessionId).
	ParentSessionID string
	RequestID       string
	// ChildSessionID is the child's id (the API's targetAgentSessionId);
	// generated when empty.
	ChildSessionID string
	// LastTurnID forks through that turn (inclusive); empty forks it all.
	LastTurnID string
	// Title is used as given when set and not empty; otherwise the child is
	// titled <parent title>(fork<num>).
	Title    *string
	Visible  *bool
	Settings session.SettingsOverride
	// Code is the child's code (code.go); nil is SHARED, today's fork.
	Code *CodeInput
}

// Result is the child and its lineage.
type Result struct {
	Session *ent.AgentSession
	Fork    *ent.SessionFork
	// Replayed is true when the request had completed before.
	Replayed bool
}

// Message sources recorded in the child's runtime context
// (forkMessageSource): where the child's history came from.
const (
	// SourceProviderTurns: the provider's history, spooled and read back.
	SourceProviderTurns = "provider-turns"
	// SourceParentCache: the provider sent no history or its stream failed
	// while spooling; the parent's cached history was copied.
	SourceParentCache = "parent-cache-fallback"
	// SourceEmptyParent: the parent had no turns; the child is a new thread.
	SourceEmptyParent = "empty-parent"
)

// Sessions is what the fork needs of the session service (satisfied by
// *session.Service): the parent as the domain sees it, the lock that keeps
// a send from starting under the fork, and the announcement of the child.
type Sessions interface {
	// Session is a workspace's session, or nil when there is none.
	Session(ctx context.Context, workspaceID, id string) (*ent.AgentSession, error)
	// SessionCwd is a session's cwd checked again now, as its real path
	// (a directory may have been swapped for a symlink out of the root).
	SessionCwd(ctx context.Context, a *ent.AgentSession) (string, error)
	// LockSession holds the session against sends until unlock is called.
	LockSession(sessionID string) (unlock func())
	// ShareSession holds it against sends, together with other sharers.
	ShareSession(sessionID string) (unlock func())
	// StageForked stages the events of a child and its lineage row in the
	// transaction that stores them; Announce publishes them once it
	// commits (on PostgreSQL they outlive a kill -9 between the two).
	StageForked(ctx context.Context, tx *ent.Tx, child *ent.AgentSession, row *ent.SessionFork) (session.Staged, error)
	Announce(ctx context.Context, st session.Staged)
}

var _ Sessions = (*session.Service)(nil)

// Reads is what the fork reads of the parent (satisfied by
// *sessionread.Reader).
type Reads interface {
	// Turn is a session's turn by its provider turn id, or nil.
	Turn(ctx context.Context, sessionID, turnID string) (*ent.Turn, error)
	// Idle says whether a session may be forked now, and if not whether a
	// turn is running.
	Idle(ctx context.Context, a *ent.AgentSession) (idle, running bool, err error)
	// DisplayTitle is the title a session is shown with.
	DisplayTitle(ctx context.Context, a *ent.AgentSession) (string, error)
}

var _ Reads = (*sessionread.Reader)(nil)

// Service forks sessions.
type Service struct {
	store    *store.Store
	sessions Sessions
	reads    Reads
	accounts session.Accounts
	rt       agent.Runtime
	log      *slog.Logger
	now      func() time.Time
	newID    func() string
	// instanceID writes the journal entries; Reconcile settles only its own.
	instanceID string
	guards     keylock.Locks
	crash      func(point string)
	lostWait   time.Duration
	spoolDir   string
	code       Code
}

// Config wires a Service.
type Config struct {
	Store    *store.Store
	Sessions Sessions
	// Accounts refuses, at once, a fork Codex could not run (not signed
	// in, an effort the model lacks): *account.Service; nil: refuses
	// nothing.
	Accounts session.Accounts
	// Reads reads the parent; nil: a sessionread.Reader on Store.
	Reads   Reads
	Runtime agent.Runtime
	Logger  *slog.Logger
	Now     func() time.Time
	NewID   func() string
	// Crash, when set, is called at each named crash point (crash.go).
	Crash func(point string)
	// LostWait bounds how long a fork whose request Codex lost waits for
	// the runtime to come back to settle its journal entry (default 10s).
	LostWait time.Duration
	// SpoolDir is where a fork spools the provider's history (spool.go);
	// empty is os.TempDir.
	SpoolDir string
	// InstanceID is this tuttid instance: the journal entries it writes
	// carry it, and Reconcile settles only those.
	InstanceID string
	// Code gives WORKTREE forks their worktree and records a child's code
	// (code.go); nil: forks have no code side.
	Code Code
}

// New returns a Service.
func New(cfg Config) *Service {
	s := &Service{store: cfg.Store, sessions: cfg.Sessions, reads: cfg.Reads, accounts: cfg.Accounts, rt: cfg.Runtime,
		log: cfg.Logger, now: cfg.Now, newID: cfg.NewID, crash: cfg.Crash, lostWait: cfg.LostWait, spoolDir: cfg.SpoolDir,
		instanceID: cfg.InstanceID, code: cfg.Code}
	if s.accounts == nil {
		s.accounts = session.NoAccounts()
	}
	if s.reads == nil {
		s.reads = sessionread.New(sessionread.Config{Store: cfg.Store})
	}
	if s.lostWait <= 0 {
		s.lostWait = 10 * time.Second
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.newID == nil {
		s.newID = session.NewID
	}
	return s
}
