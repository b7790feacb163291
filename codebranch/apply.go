package codebranch

import (
	"context"
	"errors"

	"tuttid/activity"
	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/ent/sessioncode"
	"tuttid/gitrepo"
)

// ApplyResult is the outcome of Apply.
type ApplyResult struct {
	// Applied: the target's files got the changes (never in a dry run).
	Applied bool
	// Files: what changes (or would change) in the target's files.
	Files []gitrepo.FileChange
	// Conflicts: paths the merge cannot settle; nothing was written.
	Conflicts []string
}

// Apply merges the changes of source (a WORKTREE session) since its base
// into target's working files, three-way, as uncommitted changes; all or
// nothing, whatever happens: target's files before are kept under
// gitrepo.BeforeApplyRefPrefix(target) and the write journaled
// (applyjournal.go); a write that fails is undone and answers
// storage_unavailable naming the kept commit and ref; one a crash cut
// short is undone at the next start (ReconcileApplies). Conflicts write
// nothing; dryRun writes nothing. Either session
// WORKING is agent.session_busy; a target outside the source's repository
// is invalid_input, with nothing written. A real apply records the
// source's files it brought back (applied_commit) and publishes
// SESSION_UPDATED for the target.
func (s *Service) Apply(ctx context.Context, source, target *ent.AgentSession, dryRun bool) (ApplyResult, error) {
	if source.ID == target.ID {
		return ApplyResult{}, apperr.New(apperr.InvalidInput, "a session cannot apply its changes to itself")
	}
	// Both sessions' checkpoints wait (they share the kept indexes), in
	// one order so that two applies never hold each other's.
	first, second := source.ID, target.ID
	if second < first {
		first, second = second, first
	}
	defer s.guards.Lock(first)()
	defer s.guards.Lock(second)()
	defer s.changed.drop(target.ID)
	defer s.changed.drop(source.ID)
	for _, a := range []*ent.AgentSession{source, target} {
		busy, err := s.working(ctx, a.ID)
		if err != nil {
			return ApplyResult{}, apperr.Storage(err, "read the sessions' status")
		}
		if busy {
			return ApplyResult{}, apperr.New(apperr.SessionBusy, "session %q is running a turn; wait for it or interrupt it, then apply", a.ID)
		}
	}
	src, err := s.Row(ctx, source.ID)
	if err != nil {
		return ApplyResult{}, apperr.Storage(err, "read the session's code")
	}
	if src == nil || src.Mode != sessioncode.ModeWORKTREE || src.BaseCommit == "" {
		return ApplyResult{}, apperr.New(apperr.InvalidInput, "session %q has no worktree of its own: only a WORKTREE fork's changes can be applied", source.ID)
	}
	// Neither worktree may go while the merge reads and writes them.
	src, release, err := s.holdForRead(ctx, src)
	if err != nil {
		return ApplyResult{}, err
	}
	defer release()
	if !src.WorktreePresent {
		return ApplyResult{}, apperr.New(apperr.InvalidInput, "session %q is archived (its worktree is removed); restore it, then apply", source.ID)
	}
	from, err := s.repo(ctx, repoAt{dir: src.RepositoryRoot})
	if err != nil {
		return ApplyResult{}, apperr.Wrap(err, apperr.InvalidInput, "the worktree of session %q cannot be read: %v", source.ID, err)
	}
	to, releaseTarget, err := s.targetRepo(ctx, target)
	if err != nil {
		return ApplyResult{}, err
	}
	defer releaseTarget()
	if !to.SameRepository(from) {
		return ApplyResult{}, apperr.New(apperr.InvalidInput,
			"session %q works in another repository (%s) than session %q (%s): changes apply only within one repository",
			target.ID, to.Root, source.ID, from.Root)
	}
	if !dryRun {
		if err := s.settleEarlier(ctx, target.ID); err != nil {
			return ApplyResult{}, err
		}
	}
	res, err := to.ApplyWith(ctx, from, src.BaseCommit, gitrepo.ApplyOptions{DryRun: dryRun,
		KeepUnder: gitrepo.BeforeApplyRefPrefix(target.ID), Journal: applyJournal{s: s, target: target.ID}, Step: s.applyStep})
	if errors.Is(err, gitrepo.ErrTargetChanged) {
		return ApplyResult{}, apperr.Wrap(err, apperr.SessionBusy, "the files of session %q changed while merging; nothing was written, try again", target.ID)
	}
	var failed *gitrepo.ApplyError
	if errors.As(err, &failed) {
		s.log.ErrorContext(ctx, "code: writing an apply failed", "session", source.ID, "target_session", target.ID,
			"kept_ref", failed.KeptRef, "kept_commit", failed.KeptCommit, "not_restored", len(failed.NotRestored), "err", err)
		return ApplyResult{}, apperr.Wrap(err, apperr.StorageUnavailable, "%s", writeFailure(source.ID, target.ID, failed))
	}
	if err != nil {
		s.log.ErrorContext(ctx, "code: apply failed", "session", source.ID, "target_session", target.ID, "err", err)
		return ApplyResult{}, apperr.Wrap(err, apperr.Internal, "apply the changes of session %q to session %q", source.ID, target.ID)
	}
	out := ApplyResult{Applied: res.Applied && !dryRun, Files: res.Files, Conflicts: res.Conflicts}
	if out.Conflicts == nil {
		out.Conflicts = []string{}
	}
	if !out.Applied {
		return out, nil
	}
	if res.KeptRef != "" {
		s.log.InfoContext(ctx, "code: applied", "session", source.ID, "target_session", target.ID,
			"files", len(res.Files), "kept_ref", res.KeptRef)
	}
	// What was brought back, kept as a checkpoint of the source: delete's
	// "changes never applied" compares against it.
	if cp, err := from.Checkpoint(ctx, gitrepo.CheckpointOptions{
		Ref: gitrepo.SessionRef(source.ID, "applied"), Index: s.indexPath(source.ID), Time: s.now(),
	}); err != nil {
		s.log.WarnContext(ctx, "code: applied checkpoint failed", "session", source.ID, "err", err)
	} else if err := s.store.Client.SessionCode.UpdateOne(src).SetAppliedCommit(cp.Commit).SetUpdatedAt(s.now()).Exec(ctx); err != nil {
		s.log.WarnContext(ctx, "code: applied checkpoint not stored", "session", source.ID, "err", err)
	}
	s.markAppliedTo(ctx, target.ID, to)
	if fresh, err := s.store.Client.AgentSession.Get(ctx, target.ID); err == nil {
		s.publish(ctx, activity.Event{Kind: activity.SessionUpdated, WorkspaceID: fresh.WorkspaceID, AgentSessionID: fresh.ID, Session: fresh})
	} else {
		s.log.WarnContext(ctx, "code: target session not read after apply", "session", target.ID, "err", err)
	}
	return out, nil
}

// markAppliedTo checkpoints the target's files (to, the checkout the apply
// wrote) as the apply left them and
// records it on its code row: the target's next turn's diff starts there
// (previousCheckpoint), not at its previous turn's end, so the applied
// files are not that turn's work. A target without a code row, or a
// checkpoint that fails, keeps the old diff (logged).
func (s *Service) markAppliedTo(ctx context.Context, targetID string, to *gitrepo.Repo) {
	row, err := s.Row(ctx, targetID)
	if err != nil || row == nil {
		return
	}
	now := s.now()
	cp, err := to.Checkpoint(ctx, gitrepo.CheckpointOptions{Ref: gitrepo.SessionRef(targetID, "applied-to"), Index: s.indexPath(targetID), Time: now})
	if err != nil {
		s.log.WarnContext(ctx, "code: the target's checkpoint after the apply failed", "session", targetID, "err", err)
		return
	}
	s.remember(targetID, cp)
	if err := s.store.Client.SessionCode.UpdateOne(row).SetAppliedToCommit(cp.Commit).SetAppliedToAt(now).
		SetUpdatedAt(now).Exec(ctx); err != nil {
		s.log.WarnContext(ctx, "code: the target's checkpoint after the apply not stored", "session", targetID, "err", err)
	}
}

// targetRepo is the checkout whose files an apply writes: the target's
// code row's, or its cwd's, held (holdForRead) until release is called.
func (s *Service) targetRepo(ctx context.Context, target *ent.AgentSession) (_ *gitrepo.Repo, release func(), err error) {
	row, err := s.Row(ctx, target.ID)
	if err != nil {
		return nil, nil, apperr.Storage(err, "read the target's code")
	}
	release = func() {}
	dir := target.Cwd
	if row != nil {
		if row, release, err = s.holdForRead(ctx, row); err != nil {
			return nil, nil, err
		}
		dir = row.RepositoryRoot
	}
	if row != nil && row.Mode == sessioncode.ModeWORKTREE && !row.WorktreePresent {
		release()
		return nil, nil, apperr.New(apperr.InvalidInput, "target session %q is archived (its worktree is removed); restore it first", target.ID)
	}
	r, err := s.repo(ctx, repoAt{dir: dir})
	if err != nil {
		release()
		if errors.Is(err, gitrepo.ErrNotARepository) {
			return nil, nil, apperr.New(apperr.InvalidInput, "target session %q does not work in a git repository", target.ID)
		}
		return nil, nil, apperr.Wrap(err, apperr.Internal, "read the repository of session %q", target.ID)
	}
	return r, release, nil
}
