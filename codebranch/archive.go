package codebranch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/ent/sessioncode"
	"tuttid/gitrepo"
)

// Archive, restore and delete of WORKTREE sessions (the contract's
// "Archive, restore, delete: nothing lost"): archiving records the files
// as a checkpoint and removes the worktree; restoring makes it again at
// the same path from that checkpoint; deleting refuses files with changes
// never applied unless told to discard them, then removes the worktree and
// the session's refs/tuttid/ refs, never a branch.

// worktreeRows are the WORKTREE rows of the given sessions.
func (s *Service) worktreeRows(ctx context.Context, ids []string) ([]*ent.SessionCode, error) {
	rows, err := s.store.Client.SessionCode.Query().
		Where(sessioncode.AgentSessionIDIn(ids...), sessioncode.ModeEQ(sessioncode.ModeWORKTREE), sessioncode.WorktreePathNEQ("")).
		Order(ent.Asc(sessioncode.FieldAgentSessionID)).All(ctx)
	if err != nil {
		return nil, apperr.Storage(err, "read the sessions' code")
	}
	return rows, nil
}

// repoOf opens the repository a row's worktree belongs to (repo): from its common
// directory, which outlives the worktree.
func (s *Service) repoOf(ctx context.Context, c *ent.SessionCode) (*gitrepo.Repo, error) {
	dir := c.RepositoryRoot
	if c.Mode == sessioncode.ModeWORKTREE {
		dir = strings.TrimSuffix(c.CommonDir, "/.git")
	}
	r, err := s.repo(ctx, repoAt{dir: dir})
	if err != nil {
		return nil, fmt.Errorf("open the repository of %s: %w", c.WorktreePath, err)
	}
	return r, nil
}

// ArchiveWorktrees archives the worktrees of the given sessions that have
// one: a checkpoint of its files (ref .../archive), recorded in the row,
// then the worktree removed. A worktree whose files a checkpoint cannot
// hold whole (untracked files over the size bound) is kept: nothing is
// lost. Failures are logged per session; the sessions stay archived.
func (s *Service) ArchiveWorktrees(ctx context.Context, ids []string) {
	rows, err := s.worktreeRows(ctx, ids)
	if err != nil {
		s.log.ErrorContext(ctx, "archive: the sessions' worktrees not read; they are kept", "err", err)
		return
	}
	for _, c := range rows {
		if !c.WorktreePresent {
			continue
		}
		if err := s.archiveOne(ctx, c); err != nil {
			s.log.WarnContext(ctx, "archive: worktree kept", "session", c.AgentSessionID, "worktree", c.WorktreePath, "err", err)
		}
	}
}

func (s *Service) archiveOne(ctx context.Context, c *ent.SessionCode) error {
	// No read runs in the worktree while it goes (hold.go).
	defer s.holdForRemoval(c.AgentSessionID)()
	if _, err := os.Stat(c.WorktreePath); err != nil {
		return fmt.Errorf("the worktree is missing (deleted outside tuttid?): %w", err)
	}
	wt, err := s.repo(ctx, repoAt{dir: c.WorktreePath})
	if err != nil {
		return err
	}
	cp, err := wt.Checkpoint(ctx, gitrepo.CheckpointOptions{Ref: gitrepo.SessionRef(c.AgentSessionID, "archive"), Time: s.now()})
	if err != nil {
		return err
	}
	if len(cp.Skipped) > 0 {
		return fmt.Errorf("untracked files too large for a checkpoint would be lost: %s", strings.Join(cp.Skipped, ", "))
	}
	branch, err := wt.Branch(ctx)
	if err != nil {
		return err
	}
	// Recorded before the removal: a crash between leaves a directory
	// restore replaces from this checkpoint, never a worktree with no
	// record of its files.
	if err := s.store.Client.SessionCode.UpdateOneID(c.ID).SetArchiveCommit(cp.Commit).SetBranch(branch).
		SetWorktreePresent(false).SetUpdatedAt(s.now()).Exec(ctx); err != nil {
		return apperr.Storage(err, "record the archived worktree")
	}
	repo, err := s.repoOf(ctx, c)
	if err != nil {
		return err
	}
	if err := repo.RemoveWorktree(ctx, c.WorktreePath, gitrepo.RemoveOptions{}); err != nil {
		return err
	}
	s.log.InfoContext(ctx, "archive: worktree removed; its files are kept as a checkpoint",
		"session", c.AgentSessionID, "worktree", c.WorktreePath, "commit", cp.Commit)
	return nil
}

// Why a restore failed, for the message: the worktree's path holds
// something tuttid did not make or is not tuttid's, or its repository
// cannot be opened.
var (
	errPathTaken = errors.New("the worktree's path is taken")
	errNotOwned  = errors.New("the worktree's path is not under tuttid's worktrees directory")
	errRepoGone  = errors.New("the worktree's repository cannot be opened")
)

// RestoreWorktrees makes again, at the same path, the worktrees archiving
// removed, from their archive checkpoints, on their branch if it still
// exists. It is all or nothing: when one cannot be made (its path taken by
// something tuttid did not make, its repository gone, git failing), those
// made are archived again and the error (agent.fork_code_failed) names the
// session; nothing at the path is touched. undo archives again the
// worktrees it made, for a restore whose commit failed after.
func (s *Service) RestoreWorktrees(ctx context.Context, ids []string) (undo func(context.Context), err error) {
	rows, err := s.worktreeRows(ctx, ids)
	if err != nil {
		return nil, err
	}
	var made []*ent.SessionCode
	undo = func(ctx context.Context) {
		ctx = context.WithoutCancel(ctx)
		for _, c := range made {
			if err := s.archiveOne(ctx, c); err != nil {
				s.log.WarnContext(ctx, "restore undone: worktree kept", "session", c.AgentSessionID, "worktree", c.WorktreePath, "err", err)
			}
		}
	}
	for _, c := range rows {
		if c.WorktreePresent || c.ArchiveCommit == "" {
			continue
		}
		if err := s.restoreOne(ctx, c); err != nil {
			s.log.WarnContext(ctx, "restore: worktree not made again; the restore is undone", "session", c.AgentSessionID,
				"worktree", c.WorktreePath, "commit", c.ArchiveCommit, "err", err)
			undo(ctx)
			return nil, restoreError(c, err)
		}
		made = append(made, c)
	}
	return undo, nil
}

// restoreError is the client's account of a worktree not made again (a
// database failure keeps its own code).
func restoreError(c *ent.SessionCode, err error) error {
	if ae := (*apperr.Error)(nil); errors.As(err, &ae) {
		return err
	}
	why := "git failed (the cause is in tuttid's log)"
	switch {
	case errors.Is(err, errNotOwned):
		why = "that path is not under tuttid's worktrees directory (was --data-dir changed?)"
	case errors.Is(err, errPathTaken):
		why = "that path holds files tuttid may not remove; move them away and restore again"
	case errors.Is(err, errRepoGone):
		why = "its repository cannot be opened (moved or deleted?)"
	}
	return apperr.Wrap(err, apperr.ForkCodeFailed,
		"session %q's worktree could not be made again at %s: %s; the session stays archived, its files kept as commit %s",
		c.AgentSessionID, c.WorktreePath, why, c.ArchiveCommit)
}

// restoreOne makes one worktree again; on failure it leaves the path as
// it found it (but a leftover of its own archive, below) and the row as
// it was.
func (s *Service) restoreOne(ctx context.Context, c *ent.SessionCode) error {
	// A leftover at the path is replaced: no read runs there meanwhile.
	defer s.holdForRemoval(c.AgentSessionID)()
	repo, err := s.repoOf(ctx, c)
	if err != nil {
		return fmt.Errorf("%w: %w", errRepoGone, err)
	}
	if !s.ownsPath(c.WorktreePath) {
		return errNotOwned
	}
	// A crash after the archive was recorded may have left the worktree:
	// its files are the archive checkpoint's, which restore writes again.
	// Anything else there (not a worktree of the repository, or one whose
	// files changed since) is someone's, and stays.
	if _, err := os.Lstat(c.WorktreePath); err == nil {
		err := repo.RemoveWorktree(ctx, c.WorktreePath, gitrepo.RemoveOptions{UnchangedFrom: c.ArchiveCommit})
		if errors.Is(err, gitrepo.ErrNotAWorktree) || errors.Is(err, gitrepo.ErrHasChanges) {
			return fmt.Errorf("%w: %w", errPathTaken, err)
		}
		if err != nil {
			return err
		}
	}
	opts := gitrepo.WorktreeOptions{Checkpoint: c.ArchiveCommit, Path: c.WorktreePath, Branch: c.Branch, CopyIncluded: true}
	wt, err := repo.CreateWorktree(ctx, opts)
	if errors.Is(err, gitrepo.ErrInvalidBranch) || (err != nil && c.Branch != "" && strings.Contains(err.Error(), "already")) {
		// The branch is gone or checked out elsewhere: the files still come
		// back, on a detached HEAD.
		opts.Branch = ""
		wt, err = repo.CreateWorktree(ctx, opts)
	}
	if errors.Is(err, gitrepo.ErrDestinationExists) {
		return fmt.Errorf("%w: %w", errPathTaken, err)
	}
	if err != nil {
		return err
	}
	if err := s.store.Client.SessionCode.UpdateOneID(c.ID).SetWorktreePresent(true).SetBranch(wt.Branch).
		SetUpdatedAt(s.now()).Exec(ctx); err != nil {
		// Unrecorded, the worktree goes again: its files are the
		// checkpoint's, just written.
		if rmErr := repo.RemoveWorktree(context.WithoutCancel(ctx), c.WorktreePath,
			gitrepo.RemoveOptions{UnchangedFrom: c.ArchiveCommit}); rmErr != nil {
			s.log.WarnContext(ctx, "restore: an unrecorded worktree is left; the next restore replaces it",
				"session", c.AgentSessionID, "worktree", c.WorktreePath, "err", rmErr)
		}
		return apperr.Storage(err, "record the restored worktree")
	}
	return nil
}

// Deletion is what deleting sessions must do to their code once the
// sessions are gone.
type Deletion struct {
	rows []*ent.SessionCode
}

// PrepareDelete checks that the given sessions may be deleted: a WORKTREE
// session whose files hold changes never applied back (against its base,
// or what the last apply brought back) is refused with
// agent.session_has_changes naming the files, unless discard. It returns
// what to remove after the delete.
func (s *Service) PrepareDelete(ctx context.Context, ids []string, discard bool) (*Deletion, error) {
	rows, err := s.store.Client.SessionCode.Query().Where(sessioncode.AgentSessionIDIn(ids...)).All(ctx)
	if err != nil {
		return nil, apperr.Storage(err, "read the sessions' code")
	}
	d := &Deletion{rows: rows}
	if discard {
		return d, nil
	}
	for _, c := range rows {
		if c.Mode != sessioncode.ModeWORKTREE || c.WorktreePath == "" {
			continue
		}
		paths, err := s.unapplied(ctx, c)
		if err != nil {
			return nil, err
		}
		if len(paths) > 0 {
			return nil, apperr.New(apperr.SessionHasChanges,
				"session %q's worktree holds changes never applied back: %s; apply them (applySessionChanges) or delete with discardChanges: true",
				c.AgentSessionID, (&gitrepo.ChangesError{Paths: paths}).Error())
		}
	}
	return d, nil
}

// unapplied lists the files of a worktree that differ from what was
// applied back last (or from its base).
func (s *Service) unapplied(ctx context.Context, c *ent.SessionCode) ([]string, error) {
	from := c.AppliedCommit
	if from == "" {
		from = c.BaseCommit
	}
	c, release, err := s.holdForRead(ctx, c)
	if err != nil {
		return nil, err
	}
	defer release()
	var d gitrepo.Diff
	if c.WorktreePresent {
		if _, err := os.Stat(c.WorktreePath); err != nil {
			// Deleted by hand: its files are gone already; nothing tuttid
			// holds is lost by deleting the session.
			return nil, nil
		}
		wt, err := s.repo(ctx, repoAt{dir: c.WorktreePath})
		if err != nil {
			return nil, apperr.Wrap(err, apperr.Internal, "read session %q's worktree", c.AgentSessionID)
		}
		if d, err = wt.Changes(ctx, from); err != nil {
			return nil, apperr.Wrap(err, apperr.Internal, "read session %q's changes", c.AgentSessionID)
		}
	} else if c.ArchiveCommit != "" {
		repo, err := s.repoOf(ctx, c)
		if err != nil {
			return nil, apperr.Wrap(err, apperr.Internal, "read session %q's repository", c.AgentSessionID)
		}
		if d, err = repo.Diff(ctx, from, c.ArchiveCommit); err != nil {
			return nil, apperr.Wrap(err, apperr.Internal, "read session %q's changes", c.AgentSessionID)
		}
	}
	paths := make([]string, len(d.Files))
	for i, f := range d.Files {
		paths[i] = f.Path
	}
	return paths, nil
}

// Finish removes, after the sessions' delete committed, their worktrees
// (only a path tuttid made and recorded) and their refs/tuttid/ refs.
// Branches stay. Failures are logged: tuttid orphans lists a worktree
// left.
func (s *Service) Finish(ctx context.Context, d *Deletion) {
	if d == nil {
		return
	}
	ctx = context.WithoutCancel(ctx)
	for _, c := range d.rows {
		repo, err := s.repoOf(ctx, c)
		if err != nil {
			s.log.WarnContext(ctx, "delete: the session's repository not opened; its refs and worktree are left",
				"session", c.AgentSessionID, "err", err)
			continue
		}
		if c.Mode == sessioncode.ModeWORKTREE && c.WorktreePath != "" && s.ownsPath(c.WorktreePath) {
			release := s.holdForRemoval(c.AgentSessionID)
			err := repo.RemoveWorktree(ctx, c.WorktreePath, gitrepo.RemoveOptions{})
			release()
			switch {
			case err == nil:
			case !errors.Is(err, gitrepo.ErrNotAWorktree):
				s.log.WarnContext(ctx, "delete: worktree not removed", "session", c.AgentSessionID, "worktree", c.WorktreePath, "err", err)
			case c.WorktreePresent:
				// Not a worktree git knows: a directory tuttid recorded
				// that git lost; only then removed as a plain directory.
				_ = os.RemoveAll(c.WorktreePath)
			default:
				// Archived: tuttid's worktree went with the archive, so
				// whatever is at the path now is someone else's.
				if _, err := os.Lstat(c.WorktreePath); err == nil {
					s.log.InfoContext(ctx, "delete: the archived worktree's path holds what tuttid did not make; kept",
						"session", c.AgentSessionID, "worktree", c.WorktreePath)
				}
			}
		}
		s.dropRefs(ctx, repo, c.AgentSessionID)
	}
}
