// Package codebranch is the code side of sessions (the contract's "Code
// branches: a fork takes the code with it"): it records a session's files
// at the end of each turn, gives a worktree fork its own checkout, answers
// each branch's changes and brings one branch's changes back. It keeps its
// state in the SessionCode rows and the Turn checkpoint columns, and does
// its git through gitrepo; it knows nothing of GraphQL.
package codebranch

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"tuttid/activity"
	"tuttid/gitrepo"
	"tuttid/keylock"
	"tuttid/sandbox"
	"tuttid/store"
)

// Service is the code side of sessions. It is safe for concurrent use.
type Service struct {
	store   *store.Store
	git     *gitrepo.Git
	dataDir string
	pub     activity.Publisher
	log     *slog.Logger
	now     func() time.Time
	// setup: the worktree setup's time bound and the port bases in use
	// (setup.go).
	setup setupState
	// guards serializes the checkpoints of one session: they share its
	// kept index (gitrepo.SnapshotOptions.Index).
	guards keylock.Locks
	// checkouts: reads of a session's worktree hold it shared, archive,
	// restore and delete alone (hold.go).
	checkouts keylock.RWLocks
	// instanceID marks this instance's applies in the journal.
	instanceID string
	// applyStep: Config.ApplyStep.
	applyStep func(gitrepo.ApplyStep) error

	sandbox *sandbox.Codex // the setups' (Config.Sandbox)
	mu      sync.Mutex
	repos   map[string]*gitrepo.Repo // opened checkouts by directory
	gitDirs map[string]*gitrepo.Repo // repositories opened at their common git directory
	// changed: each worktree session's changed files, read a moment ago
	// (changescache.go).
	changed changesCache
	// last is each session's latest checkpoint as written (its tree and
	// head), so the next turn's end need not read it back from git.
	last map[string]gitrepo.Checkpoint
}

// Config wires a Service.
type Config struct {
	Store *store.Store
	// Git runs git; gitrepo.New with Logger when nil.
	Git *gitrepo.Git
	// DataDir holds the worktrees tuttid makes:
	// <DataDir>/worktrees/<workspaceId>/<childSessionId>, and the sessions'
	// kept indexes (<DataDir>/code/index/<sessionId>). Empty: no index is
	// kept between turns (each checkpoint starts from the user's index).
	DataDir string
	// SetupTimeout bounds a workspace's worktreeSetup (default 10 minutes).
	SetupTimeout time.Duration
	// AgentNice is the worktree setup's nice value (priority.LowerGroup,
	// --agent-nice), and git's when Git is nil (gitrepo.Config.Nice); 0
	// keeps tuttid's.
	AgentNice int
	// Sandbox runs the worktree setup of a workspace whose commandSandbox
	// is AGENT; nil: such a setup does not run (the fork fails), never
	// unsandboxed.
	Sandbox *sandbox.Codex
	// Publisher gets SESSION_UPDATED for the target of an apply (nil: none).
	Publisher activity.Publisher
	Logger    *slog.Logger
	Now       func() time.Time
	// InstanceID is this instance's id among those sharing the database:
	// an apply's journal entry carries it, and only this instance settles
	// it at its start (the checkout is on its machine).
	InstanceID string
	// ApplyStep, for tests, is asked before each file step of an apply's
	// write (gitrepo.ApplyOptions.Step): a full disk, or a stop, there.
	ApplyStep func(gitrepo.ApplyStep) error
}

// New returns a Service for cfg.
func New(cfg Config) *Service {
	s := &Service{store: cfg.Store, git: cfg.Git, dataDir: cfg.DataDir, pub: cfg.Publisher, log: cfg.Logger, now: cfg.Now,
		instanceID: cfg.InstanceID, applyStep: cfg.ApplyStep,
		repos: map[string]*gitrepo.Repo{}, gitDirs: map[string]*gitrepo.Repo{}, last: map[string]gitrepo.Checkpoint{}}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.git == nil {
		s.git = gitrepo.New(gitrepo.Config{Logger: s.log, Nice: cfg.AgentNice})
	}
	s.setup.timeout = cfg.SetupTimeout
	s.setup.nice = cfg.AgentNice
	s.sandbox = cfg.Sandbox
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

// Wait waits for the kept indexes being refreshed after their checkpoints
// (gitrepo refreshes them in the background).
func (s *Service) Wait(ctx context.Context) error {
	return s.git.Wait(ctx)
}

// indexPath is the session's kept index, or "" without a data directory.
func (s *Service) indexPath(sessionID string) string {
	if s.dataDir == "" {
		return ""
	}
	return filepath.Join(s.dataDir, "code", "index", sessionID)
}

func (s *Service) publish(ctx context.Context, e activity.Event) {
	if s.pub != nil {
		s.pub.Publish(ctx, e)
	}
}

// remembered is the session's last checkpoint if it is commit.
func (s *Service) remembered(sessionID, commit string) (gitrepo.Checkpoint, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cp, ok := s.last[sessionID]
	return cp, ok && cp.Commit == commit
}

func (s *Service) remember(sessionID string, cp gitrepo.Checkpoint) {
	s.changed.drop(sessionID) // a checkpoint: a turn ended or the session started
	s.mu.Lock()
	defer s.mu.Unlock()
	if cp.Commit == "" {
		delete(s.last, sessionID)
		return
	}
	s.last[sessionID] = cp
}
