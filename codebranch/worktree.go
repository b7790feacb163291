package codebranch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/ent/sessioncode"
	"tuttid/gitrepo"
	"tuttid/sandbox"
)

// Code modes, as stored and as the API names them.
const (
	ModeShared   = "SHARED"
	ModeWorktree = "WORKTREE"
)

// ForkCodeInput is what a fork asks of the code side.
type ForkCodeInput struct {
	WorkspaceID, ParentSessionID, ChildSessionID string
	// ParentCwd is the parent's cwd, checked and resolved.
	ParentCwd string
	// Worktree: the child gets its own worktree (code.mode WORKTREE).
	Worktree bool
	// Branch is a new branch to create there; "" leaves HEAD detached.
	Branch string
	// TurnID, when set, is the turn forked from; TurnCheckpoint its
	// checkpoint commit ("" when it has none).
	TurnID, TurnCheckpoint string
	// PermissionMode is the child's (agent.Permission*; "" is
	// workspace-write): the worktree setup gets no more power than it.
	PermissionMode string
}

// ForkCode is a fork's code plan, then (after MakeWorktree) what the child
// got: the SessionCode row written with the child.
type ForkCode struct {
	Mode string
	// RepositoryRoot is the parent's top level until MakeWorktree, then
	// the worktree's (WORKTREE).
	RepositoryRoot string
	CommonDir      string
	// WorktreePath is where the worktree goes (WORKTREE).
	WorktreePath string
	// Cwd is the child's cwd: the worktree plus the parent's cwd relative
	// to its repository (WORKTREE); the parent's cwd (SHARED).
	Cwd         string
	Branch      string
	BaseCommit  string
	BaseHead    string
	BaseAt      time.Time
	StartCommit string
	SetupOutput string
	PortBase    int

	in     ForkCodeInput
	parent *gitrepo.Repo
	// release gives back the port base reserved for the setup.
	release func()
	// confine is the sandbox the setup runs in; nil: as the person
	// (MakeChild decides, setupSandbox).
	confine *sandbox.Codex
}

// worktreesRoot is where every worktree tuttid makes lives.
func (s *Service) worktreesRoot() string { return filepath.Join(s.dataDir, "worktrees") }

// WorktreePath is the one place tuttid makes a child's worktree:
// <data dir>/worktrees/<workspaceId>/<childSessionId>.
func (s *Service) WorktreePath(workspaceID, childID string) string {
	return filepath.Join(s.worktreesRoot(), workspaceID, childID)
}

// PlanFork checks what a fork's code needs without writing anything: the
// parent's repository, the checkpoint a worktree starts from. It returns
// nil for a SHARED fork of a session outside any repository.
func (s *Service) PlanFork(ctx context.Context, in ForkCodeInput) (*ForkCode, error) {
	repo, err := s.repo(ctx, repoAt{dir: in.ParentCwd})
	if errors.Is(err, gitrepo.ErrNotARepository) {
		if in.Worktree {
			return nil, apperr.New(apperr.ForkNotARepository,
				"session %q works in %q, which is in no git repository; fork it with code mode SHARED", in.ParentSessionID, in.ParentCwd)
		}
		return nil, nil
	}
	if err != nil {
		if in.Worktree {
			return nil, apperr.Wrap(err, apperr.ForkCodeFailed, "the parent's repository could not be read")
		}
		// A SHARED fork does not need the code side: it goes on without it.
		s.log.WarnContext(ctx, "fork: the parent's repository could not be read; the child has no code record",
			"session", in.ParentSessionID, "child_session", in.ChildSessionID, "err", err)
		return nil, nil
	}
	fc := &ForkCode{Mode: ModeShared, RepositoryRoot: repo.Root, CommonDir: repo.CommonDir, Cwd: in.ParentCwd,
		in: in, parent: repo, release: func() {}}
	if in.TurnID != "" && in.TurnCheckpoint == "" && in.Worktree {
		return nil, apperr.New(apperr.ForkCodeFailed,
			"turn %q has no checkpoint of the session's files (it ended before tuttid recorded them), so its code cannot be forked; fork the whole conversation or a later turn", in.TurnID)
	}
	if !in.Worktree {
		return fc, nil
	}
	if s.dataDir == "" {
		return nil, apperr.New(apperr.ForkCodeFailed, "tuttid has no data directory for worktrees (--data-dir)")
	}
	fc.Mode = ModeWorktree
	fc.Branch = in.Branch
	fc.WorktreePath = s.WorktreePath(in.WorkspaceID, in.ChildSessionID)
	if _, err := os.Lstat(fc.WorktreePath); err == nil {
		// Another fork made for this child id, or one a crash left that the
		// next start (or tuttid orphans clean) removes: never written over.
		return nil, apperr.New(apperr.ForkCodeFailed,
			"the worktree's directory %s already exists (a fork for session %q in flight, or left by a crash: tuttid orphans lists it); nothing was created",
			fc.WorktreePath, in.ChildSessionID)
	}
	return fc, nil
}

// Release gives back what the plan holds in memory (its port base).
func (fc *ForkCode) Release() {
	if fc != nil && fc.release != nil {
		fc.release()
	}
}

// Record takes the fork's checkpoint: for a SHARED fork its start (the
// turn's checkpoint, or the parent's files now); for a WORKTREE fork its
// base. It writes only refs under the child's refs/tuttid/ prefix.
func (s *Service) Record(ctx context.Context, fc *ForkCode) error {
	if fc == nil {
		return nil
	}
	ref := gitrepo.SessionRef(fc.in.ChildSessionID, "start")
	if fc.Mode == ModeWorktree {
		ref = gitrepo.SessionRef(fc.in.ChildSessionID, "base")
	}
	var cp gitrepo.Checkpoint
	var err error
	if fc.in.TurnCheckpoint != "" {
		if cp, err = fc.parent.ReadCheckpoint(ctx, fc.in.TurnCheckpoint); err == nil {
			err = fc.parent.SetRef(ctx, ref, cp.Commit)
		}
	} else {
		cp, err = fc.parent.Checkpoint(ctx, gitrepo.CheckpointOptions{Ref: ref, Time: s.now()})
	}
	if err != nil {
		if fc.Mode == ModeWorktree {
			return apperr.Wrap(err, apperr.ForkCodeFailed, "the parent's files could not be recorded for the worktree")
		}
		return apperr.Wrap(err, apperr.Internal, "the parent's files could not be recorded")
	}
	fc.StartCommit = cp.Commit
	if fc.Mode == ModeWorktree {
		fc.BaseCommit, fc.BaseHead, fc.BaseAt = cp.Commit, cp.Head, s.now()
	}
	return nil
}

// MakeWorktree makes the child's worktree from the plan's base and runs
// the workspace's setup command there. On failure nothing is left: no
// worktree, no branch, no ref of the child.
func (s *Service) MakeWorktree(ctx context.Context, fc *ForkCode, setup string) error {
	if fc == nil || fc.Mode != ModeWorktree {
		return nil
	}
	wt, err := fc.parent.CreateWorktree(ctx, gitrepo.WorktreeOptions{
		Checkpoint: fc.BaseCommit, Path: fc.WorktreePath, NewBranch: fc.Branch, CopyIncluded: true,
	})
	if err != nil {
		s.dropRefs(ctx, fc.parent, fc.in.ChildSessionID)
		return worktreeErr(err, fc)
	}
	fc.RepositoryRoot, fc.Cwd, fc.Branch = wt.Path, wt.Dir, wt.Branch
	if setup != "" {
		if err := s.runSetup(ctx, fc, setup); err != nil {
			s.DropWorktree(ctx, fc)
			return err
		}
	}
	return nil
}

func worktreeErr(err error, fc *ForkCode) error {
	switch {
	case errors.Is(err, gitrepo.ErrInvalidBranch):
		return apperr.Wrap(err, apperr.InvalidInput, "code.branch %q is not a branch name git accepts", fc.Branch)
	case errors.Is(err, gitrepo.ErrBranchExists):
		return apperr.Wrap(err, apperr.InvalidInput, "code.branch %q already exists; name a new branch", fc.Branch)
	case errors.Is(err, gitrepo.ErrUnsafeInclude):
		return apperr.Wrap(err, apperr.ForkCodeFailed,
			"the repository's .worktreeinclude names a file that leads out of the repository (a symlink); nothing was created")
	case errors.Is(err, gitrepo.ErrNoCommit):
		return apperr.Wrap(err, apperr.ForkCodeFailed, "the repository has no commit yet, so a worktree cannot be made; commit once first")
	case errors.Is(err, gitrepo.ErrDestinationExists):
		return apperr.Wrap(err, apperr.ForkCodeFailed, "the worktree's directory %s already exists; nothing was created", fc.WorktreePath)
	}
	return apperr.Wrap(err, apperr.ForkCodeFailed, "the child's worktree could not be made; nothing was created")
}

// DropWorktree undoes MakeWorktree (and Record): the worktree, its files
// and the child's refs go; a branch it made stays (tuttid never deletes a
// branch) unless the worktree is dropped before the fork answered, when
// nothing may be left behind.
func (s *Service) DropWorktree(ctx context.Context, fc *ForkCode) {
	if fc == nil {
		return
	}
	ctx = context.WithoutCancel(ctx)
	if fc.Mode == ModeWorktree {
		if err := fc.parent.RemoveWorktree(ctx, fc.WorktreePath, gitrepo.RemoveOptions{}); err != nil &&
			!errors.Is(err, gitrepo.ErrNotAWorktree) {
			s.log.ErrorContext(ctx, "fork: the failed fork's worktree not removed; tuttid orphans lists it",
				"child_session", fc.in.ChildSessionID, "worktree", fc.WorktreePath, "err", err)
		}
		if fc.in.Branch != "" && fc.Branch != "" {
			fc.parent.DeleteBranch(ctx, fc.in.Branch, fc.BaseHead)
		}
	}
	s.dropRefs(ctx, fc.parent, fc.in.ChildSessionID)
}

// DropForkRefs removes the refs a fork recorded for a child it never
// stored (refs/tuttid/sessions/<child>/) from the repository of parentCwd;
// a failure is logged (the refs are clutter, not a loss).
func (s *Service) DropForkRefs(ctx context.Context, childID, parentCwd string) {
	repo, err := s.repo(ctx, repoAt{dir: parentCwd})
	if err != nil {
		if !errors.Is(err, gitrepo.ErrNotARepository) {
			s.log.WarnContext(ctx, "code: an unfinished fork's refs not removed", "session", childID, "err", err)
		}
		return
	}
	s.dropRefs(ctx, repo, childID)
}

func (s *Service) dropRefs(ctx context.Context, repo *gitrepo.Repo, childID string) {
	if err := repo.DeleteRefs(context.WithoutCancel(ctx), gitrepo.SessionRefPrefix(childID)); err != nil {
		s.log.WarnContext(ctx, "code: a session's refs not removed", "session", childID, "err", err)
	}
}

// Create writes the child's SessionCode row, in the fork's transaction.
func (fc *ForkCode) Create(ctx context.Context, c *ent.Client, now time.Time) error {
	if fc == nil {
		return nil
	}
	q := c.SessionCode.Create().SetAgentSessionID(fc.in.ChildSessionID).SetWorkspaceID(fc.in.WorkspaceID).
		SetMode(sessioncode.Mode(fc.Mode)).SetRepositoryRoot(fc.RepositoryRoot).SetCommonDir(fc.CommonDir).
		SetStartCommit(fc.StartCommit).SetCreatedAt(now).SetUpdatedAt(now)
	if fc.Mode == ModeWorktree {
		q.SetWorktreePath(fc.WorktreePath).SetWorktreePresent(true).SetBranch(fc.Branch).
			SetBaseCommit(fc.BaseCommit).SetBaseHead(fc.BaseHead).SetBaseAt(fc.BaseAt).
			SetSetupOutput(fc.SetupOutput).SetPortBase(fc.PortBase)
	}
	if err := q.Exec(ctx); err != nil {
		return fmt.Errorf("store the child's code: %w", err)
	}
	return nil
}

// RemoveOrphanWorktree removes a worktree a fork recorded and did not
// finish: only at path, which must be a worktree tuttid's data directory
// holds, and only when no session's code row names it. parentCwd finds the
// repository when the worktree's own files are gone.
func (s *Service) RemoveOrphanWorktree(ctx context.Context, childID, path, parentCwd string) error {
	if !s.ownsPath(path) {
		return fmt.Errorf("%s is not under tuttid's worktrees directory %s; not removed", path, s.worktreesRoot())
	}
	held, err := s.store.Client.SessionCode.Query().Where(sessioncode.WorktreePath(path)).Exist(ctx)
	if err != nil {
		return apperr.Storage(err, "check the worktree's owner")
	}
	if held {
		return nil
	}
	repo, err := s.repo(ctx, repoAt{dir: parentCwd})
	if err != nil {
		repo, err = s.repo(ctx, repoAt{dir: path})
	}
	if err == nil {
		if rerr := repo.RemoveWorktree(ctx, path, gitrepo.RemoveOptions{}); rerr != nil && !errors.Is(rerr, gitrepo.ErrNotAWorktree) {
			return rerr
		}
		s.dropRefs(ctx, repo, childID)
	}
	// A directory git does not know (a crash inside git worktree add) is
	// still tuttid's: the journal recorded it before it was made.
	if err := os.RemoveAll(path); err != nil {
		return err
	}
	return nil
}

// OrphanWorktreeExists says whether a recorded worktree's directory is
// still on disk and held by no session.
func (s *Service) OrphanWorktreeExists(ctx context.Context, path string) (bool, error) {
	if !s.ownsPath(path) {
		return false, nil
	}
	if _, err := os.Lstat(path); err != nil {
		return false, nil
	}
	held, err := s.store.Client.SessionCode.Query().Where(sessioncode.WorktreePath(path)).Exist(ctx)
	if err != nil {
		return false, apperr.Storage(err, "check the worktree's owner")
	}
	return !held, nil
}

// ownsPath says whether path is a worktree directory tuttid makes:
// <worktrees root>/<workspace>/<session>, nothing above or beside.
func (s *Service) ownsPath(path string) bool {
	if s.dataDir == "" || !filepath.IsAbs(path) {
		return false
	}
	rel, err := filepath.Rel(s.worktreesRoot(), filepath.Clean(path))
	if err != nil {
		return false
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	return len(parts) == 2 && parts[0] != ".." && parts[0] != "." && parts[0] != "" && parts[1] != ""
}
