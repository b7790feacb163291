// Package explore is Explore: one request forks a session's turn into 2 to
// 8 worktree branches (ordinary forks, package fork), starts each branch's
// first turn under a bound of concurrent turns per Codex process, runs the
// exploration's check command in each branch's worktree after each of its
// turns (package shellrun, through codebranch.InWorktree), ranks the
// branches when read, and brings the winner back: its files through
// codebranch's apply, its story through session.Tell. It has no GraphQL in
// it; the transports translate to it. A file holds one job:
//
//	explore.go    the request: check, store, fork, start (exploreSession)
//	input.go      the request's form and bounds
//	gate.go       the turn bound and its FIFO queue
//	check.go      a branch's check after each turn
//	view.go       what is read: branches, their state, sizes, checks
//	rank.go       the ranking
//	apply.go      a branch back into the parent, and telling the parent
//	review.go     Codex's review of a branch
//	choose.go     the winner mark, archiving the other branches
//	reconcile.go  at start: what a stopped tuttid left
package explore

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"tuttid/activity"
	"tuttid/codebranch"
	"tuttid/ent"
	"tuttid/fork"
	"tuttid/keylock"
	"tuttid/sandbox"
	"tuttid/session"
	"tuttid/store"
)

// DefaultMaxConcurrentTurns is --max-concurrent-turns' default.
const DefaultMaxConcurrentTurns = 4

// Forks makes the branches (*fork.Service).
type Forks interface {
	Check(ctx context.Context, in fork.Input) error
	Fork(ctx context.Context, in fork.Input) (*fork.Result, error)
}

// Sessions runs the branches' turns, tells the parent, archives
// (*session.Service).
type Sessions interface {
	Session(ctx context.Context, workspaceID, id string) (*ent.AgentSession, error)
	Send(ctx context.Context, workspaceID, sessionID, text string) (*ent.Turn, error)
	Interrupt(ctx context.Context, workspaceID, sessionID, turnID string) (*ent.Turn, error)
	Tell(ctx context.Context, workspaceID, sessionID, text string) error
	Review(ctx context.Context, workspaceID, sessionID, instructions string) (string, error)
	Update(ctx context.Context, in session.UpdateInput) (*ent.AgentSession, error)
	LockSession(sessionID string) (unlock func())
}

// Code is the branches' files (*codebranch.Service).
type Code interface {
	InWorktree(ctx context.Context, a *ent.AgentSession, run func(dir string, env []string) error) error
	Summaries(ctx context.Context, sessionIDs []string) (map[string]codebranch.Summary, error)
	// Touched says a check ran in the session's worktree (it may have
	// written files): its changes are read again.
	Touched(sessionID string)
	ApplyChanges(ctx context.Context, req codebranch.ApplyRequest) (codebranch.ApplyResult, error)
}

// Config wires a Service.
type Config struct {
	Store     *store.Store
	Forks     Forks
	Sessions  Sessions
	Code      Code
	Publisher activity.Publisher
	Logger    *slog.Logger
	// InstanceID owns the explorations this service makes: it starts
	// their queued branches and runs their checks.
	InstanceID string
	// MaxConcurrentTurns bounds the turns running at once on this
	// instance's Codex that a branch's first turn may join; 0: no bound.
	MaxConcurrentTurns int
	// AgentNice is the checks' nice value (priority.LowerGroup,
	// --agent-nice); 0 keeps tuttid's.
	AgentNice int
	// Sandbox runs the checks of a workspace whose commandSandbox is
	// AGENT; nil: such a check does not run (ERROR), never unsandboxed.
	Sandbox *sandbox.Codex
	// Now and NewID are for tests.
	Now   func() time.Time
	NewID func() string
	// Crash, for the crash tests only, is called at each crash point
	// (Crash*) and may kill the process there.
	Crash func(point string)
}

// Crash points of an exploration (the crash tests kill tuttid there).
const (
	// CrashStored: the exploration and its branches are stored; no fork
	// has started. A restart forks them.
	CrashStored = "explore.stored"
	// CrashForked: a branch is forked and queued, its first turn not
	// started; others may not be forked yet. A restart forks those and
	// starts the turns.
	CrashForked = "explore.forked"
	// CrashTelling: a branch's summary is recorded as being told; Codex
	// has not been asked. CrashTold: Codex took it; the row does not say
	// so yet. After either the telling is uncertain.
	CrashTelling = "explore.telling"
	CrashTold    = "explore.told"
)

// Service runs explorations.
type Service struct {
	store    *store.Store
	forks    Forks
	sessions Sessions
	code     Code
	pub      activity.Publisher
	log      *slog.Logger
	instance string
	now      func() time.Time
	newID    func() string
	crash    func(point string)
	nice     int // the checks' (Config.AgentNice)
	sandbox  *sandbox.Codex
	gate     gate
	checks   checks
	// requests runs one request of a requestId at a time, so that the
	// second answers the first's exploration.
	requests keylock.Locks
	// bg runs what outlives a request (checks, the queue's pump) until
	// Close; work started after Close is dropped.
	bg    sync.WaitGroup
	bgCtx context.Context
	stop  context.CancelFunc
}

// New returns a Service.
func New(cfg Config) *Service {
	s := &Service{store: cfg.Store, forks: cfg.Forks, sessions: cfg.Sessions, code: cfg.Code, pub: cfg.Publisher,
		log: cfg.Logger, instance: cfg.InstanceID, now: cfg.Now, newID: cfg.NewID, crash: cfg.Crash,
		nice: cfg.AgentNice, sandbox: cfg.Sandbox}
	if s.crash == nil {
		s.crash = func(string) {}
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
	s.gate.limit = cfg.MaxConcurrentTurns
	s.checks.slots = make(chan struct{}, max(cfg.MaxConcurrentTurns, 1))
	s.bgCtx, s.stop = context.WithCancel(context.Background())
	return s
}

// Close stops the checks running (their process groups are killed) and
// waits for the background work.
func (s *Service) Close() {
	s.stop()
	s.bg.Wait()
}

// background runs f on its own goroutine with the service's context.
func (s *Service) background(f func(ctx context.Context)) {
	if s.bgCtx.Err() != nil {
		return
	}
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		f(s.bgCtx)
	}()
}

// updated publishes EXPLORATION_UPDATED on the exploration's parent.
func (s *Service) updated(ctx context.Context, x *ent.Exploration) {
	if s.pub == nil {
		return
	}
	s.pub.Publish(ctx, activity.Event{Kind: activity.ExplorationUpdated, WorkspaceID: x.WorkspaceID,
		AgentSessionID: x.ParentAgentSessionID, ExplorationID: x.ID})
}
