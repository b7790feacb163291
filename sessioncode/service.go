// Package sessioncode is the code side of sessions (the contract's "Code
// branches: a fork takes the code with it"): it records a session's files
// at the end of each turn, gives a worktree fork its own checkout, answers
// each branch's changes and brings one branch's changes back. It keeps its
// state in the SessionCode rows and the Turn checkpoint columns, and does
// its git through codebranch; it knows nothing of GraphQL.
package sessioncode

import (
	"log/slog"
	"time"

	"tuttid/codebranch"
	"tuttid/store"
)

// Service is the code side of sessions. It is safe for concurrent use.
type Service struct {
	store   *store.Store
	git     *codebranch.Git
	dataDir string
	log     *slog.Logger
	now     func() time.Time
	// setup: the worktree setup's time bound and the port bases in use
	// (setup.go).
	setup setupState
}

// Config wires a Service.
type Config struct {
	Store *store.Store
	// Git runs git; codebranch.New(codebranch.Config{}) when nil.
	Git *codebranch.Git
	// DataDir holds the worktrees tuttid makes:
	// <DataDir>/worktrees/<workspaceId>/<childSessionId>.
	DataDir string
	// SetupTimeout bounds a workspace's worktreeSetup (default 10 minutes).
	SetupTimeout time.Duration
	Logger       *slog.Logger
	Now          func() time.Time
}

// New returns a Service for cfg.
func New(cfg Config) *Service {
	s := &Service{store: cfg.Store, git: cfg.Git, dataDir: cfg.DataDir, log: cfg.Logger, now: cfg.Now}
	if s.git == nil {
		s.git = codebranch.New(codebranch.Config{})
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	s.setup.timeout = cfg.SetupTimeout
	if s.now == nil {
		s.now = time.Now
	}
	return s
}
