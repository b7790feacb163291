package codebranch

import (
	"context"
	"fmt"

	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/ent/sessioncode"
	"tuttid/ent/turn"
	"tuttid/gitrepo"
)

// TurnDiff is what a turn changed: the previous checkpoint of its session
// (or the session's start) to the turn's. nil when the turn has no
// checkpoint (outside a repository, or still running). A session's first
// turn with neither a start nor an earlier checkpoint is diffed against
// the HEAD of its checkpoint.
//
// withPatch false leaves Patch empty (one git call fewer): a list of the
// turn's files needs none.
func (s *Service) TurnDiff(ctx context.Context, t *ent.Turn, withPatch bool) (*gitrepo.Diff, error) {
	if t.CheckpointCommit == "" {
		return nil, nil
	}
	row, err := s.Row(ctx, t.AgentSessionID)
	if err != nil {
		return nil, fmt.Errorf("read the session's code: %w", err)
	}
	if row == nil {
		return nil, nil
	}
	prev, err := s.previousCheckpoint(ctx, t.AgentSessionID, t.TurnID, row)
	if err != nil {
		return nil, err
	}
	if prev == t.CheckpointCommit {
		// A turn that changed nothing: no git to ask.
		return &gitrepo.Diff{Files: []gitrepo.FileChange{}}, nil
	}
	if prev == "" {
		prev = t.CheckpointHead // "" is the empty tree: an unborn HEAD
	}
	// Two commits: read at the git directory, never in a worktree that an
	// archive may be removing.
	r, err := s.commitsRepo(ctx, row)
	if err != nil {
		return nil, err
	}
	diff := r.DiffFiles
	if withPatch {
		diff = r.Diff
	}
	d, err := diff(ctx, prev, t.CheckpointCommit)
	if err != nil {
		return nil, err
	}
	return &d, nil
}

// Branch is the branch checked out where the session works, "" when HEAD
// is detached (or its checkout is gone).
func (s *Service) Branch(ctx context.Context, row *ent.SessionCode) (string, error) {
	row, release, err := s.holdForRead(ctx, row)
	if err != nil {
		return "", err
	}
	defer release()
	if row.Mode == sessioncode.ModeWORKTREE && !row.WorktreePresent {
		return row.Branch, nil
	}
	r, err := s.repo(ctx, repoAt{dir: row.RepositoryRoot})
	if err != nil {
		return "", err
	}
	return r.Branch(ctx)
}

// Changes is the session's files now against its base (WORKTREE) or its
// checkout's HEAD (SHARED); an archived worktree answers with the files it
// was archived with.
func (s *Service) Changes(ctx context.Context, row *ent.SessionCode) (gitrepo.Diff, error) {
	return s.changes(ctx, row, true)
}

// ChangedFiles is Changes without the patch.
func (s *Service) ChangedFiles(ctx context.Context, row *ent.SessionCode) (gitrepo.Diff, error) {
	return s.changes(ctx, row, false)
}

func (s *Service) changes(ctx context.Context, row *ent.SessionCode, withPatch bool) (gitrepo.Diff, error) {
	if row.Mode != sessioncode.ModeWORKTREE {
		key := fmt.Sprintf("%s\x00%t", row.RepositoryRoot, withPatch)
		return memoized(ctx, key, func() (gitrepo.Diff, error) { return s.changesNow(ctx, row, withPatch) })
	}
	if !withPatch && row.WorktreePresent {
		return s.changed.read(ctx, row.AgentSessionID, s.now, func() (gitrepo.Diff, error) { return s.changesNow(ctx, row, false) })
	}
	return s.changesNow(ctx, row, withPatch)
}

// changesNow reads the changes with the session's worktree held: whole,
// or (archived meanwhile) from the archive checkpoint.
func (s *Service) changesNow(ctx context.Context, row *ent.SessionCode, withPatch bool) (gitrepo.Diff, error) {
	row, release, err := s.holdForRead(ctx, row)
	if err != nil {
		return gitrepo.Diff{}, err
	}
	defer release()
	return s.changesOf(ctx, row, withPatch)
}

func (s *Service) changesOf(ctx context.Context, row *ent.SessionCode, withPatch bool) (gitrepo.Diff, error) {
	tree, r, err := s.filesNow(ctx, row)
	if err != nil {
		return gitrepo.Diff{}, err
	}
	base := row.BaseCommit
	if row.Mode != sessioncode.ModeWORKTREE || base == "" {
		if base, err = r.Head(ctx); err != nil {
			return gitrepo.Diff{}, err
		}
	}
	if !withPatch {
		return r.DiffFiles(ctx, base, tree)
	}
	return r.Diff(ctx, base, tree)
}

// filesNow is a tree of the session's files now (a snapshot of its
// checkout, or its archive checkpoint while archived) and a repository to
// read it in. Its callers hold the session's worktree (holdForRead).
func (s *Service) filesNow(ctx context.Context, row *ent.SessionCode) (string, *gitrepo.Repo, error) {
	if row.Mode == sessioncode.ModeWORKTREE && !row.WorktreePresent {
		r, err := s.commitsRepo(ctx, row)
		if err != nil {
			return "", nil, err
		}
		return row.ArchiveCommit, r, nil
	}
	r, err := s.repo(ctx, repoAt{dir: row.RepositoryRoot})
	if err != nil {
		return "", nil, err
	}
	snap, err := r.Snapshot(ctx, gitrepo.SnapshotOptions{})
	if err != nil {
		return "", nil, err
	}
	return snap.Tree, r, nil
}

// Comparison is the code of two sessions of one repository side by side.
type Comparison struct {
	// Base is the checkpoint at their fork point; nil when none is known
	// (the changes are then against each side's HEAD).
	Base *Checkpoint
	// AChanges, BChanges: each side's files now against Base; Diff: a's
	// files now to b's.
	AChanges, BChanges, Diff gitrepo.Diff
}

// Compare sets the code of a and b side by side; nil unless both have
// code in the same repository. forkTurnID is the last turn they share
// ("" when none): its checkpoint (in a, b or ancestor) is the base.
func (s *Service) Compare(ctx context.Context, a, b *ent.AgentSession, ancestor *ent.AgentSession, forkTurnID string) (*Comparison, error) {
	ra, err := s.Row(ctx, a.ID)
	if err != nil || ra == nil {
		return nil, err
	}
	rb, err := s.Row(ctx, b.ID)
	if err != nil || rb == nil {
		return nil, err
	}
	if ra.CommonDir != rb.CommonDir {
		return nil, nil
	}
	// Both worktrees held, in one order (a and b may be compared both ways
	// at once).
	first, second := &ra, &rb
	if rb.AgentSessionID < ra.AgentSessionID {
		first, second = second, first
	}
	held, release, err := s.holdForRead(ctx, *first)
	if err != nil {
		return nil, err
	}
	defer release()
	*first = held
	if ra.AgentSessionID == rb.AgentSessionID {
		// One session on both sides: held once (a second read hold would
		// wait behind an archive waiting for the first).
		rb = ra
		return s.compareRows(ctx, a, b, ancestor, forkTurnID, ra, rb)
	}
	if held, release, err = s.holdForRead(ctx, *second); err != nil {
		return nil, err
	}
	defer release()
	*second = held
	return s.compareRows(ctx, a, b, ancestor, forkTurnID, ra, rb)
}

func (s *Service) compareRows(ctx context.Context, a, b, ancestor *ent.AgentSession, forkTurnID string, ra, rb *ent.SessionCode) (*Comparison, error) {
	base, err := s.forkBase(ctx, []*ent.AgentSession{a, b, ancestor}, forkTurnID, ra, rb)
	if err != nil {
		return nil, err
	}
	ta, repo, err := s.filesNow(ctx, ra)
	if err != nil {
		return nil, fmt.Errorf("read %s's files: %w", a.ID, err)
	}
	tb, _, err := s.filesNow(ctx, rb)
	if err != nil {
		return nil, fmt.Errorf("read %s's files: %w", b.ID, err)
	}
	out := &Comparison{Base: base}
	baseA, baseB := "", ""
	if base != nil {
		baseA, baseB = base.Commit, base.Commit
	} else {
		// No fork point recorded: each side against its own HEAD.
		if baseA, err = s.headOf(ctx, ra); err != nil {
			return nil, err
		}
		if baseB, err = s.headOf(ctx, rb); err != nil {
			return nil, err
		}
	}
	if out.AChanges, err = repo.Diff(ctx, baseA, ta); err != nil {
		return nil, err
	}
	if out.BChanges, err = repo.Diff(ctx, baseB, tb); err != nil {
		return nil, err
	}
	if out.Diff, err = repo.Diff(ctx, ta, tb); err != nil {
		return nil, err
	}
	return out, nil
}

func (s *Service) headOf(ctx context.Context, row *ent.SessionCode) (string, error) {
	if row.Mode == sessioncode.ModeWORKTREE && !row.WorktreePresent {
		return row.BaseHead, nil
	}
	r, err := s.repo(ctx, repoAt{dir: row.RepositoryRoot})
	if err != nil {
		return "", err
	}
	return r.Head(ctx)
}

// forkBase finds the checkpoint of the fork turn in the first of sessions
// that has one, else the base a WORKTREE side was made from.
func (s *Service) forkBase(ctx context.Context, sessions []*ent.AgentSession, forkTurnID string, rows ...*ent.SessionCode) (*Checkpoint, error) {
	if forkTurnID != "" {
		for _, a := range sessions {
			if a == nil {
				continue
			}
			t, err := s.store.Client.Turn.Query().
				Where(turn.AgentSessionID(a.ID), turn.TurnID(forkTurnID), turn.CheckpointCommitNEQ("")).First(ctx)
			if ent.IsNotFound(err) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("read the fork turn's checkpoint: %w", err)
			}
			return turnCheckpoint(t), nil
		}
	}
	for _, row := range rows {
		if row.BaseCommit != "" {
			cp := &Checkpoint{Commit: row.BaseCommit, Head: row.BaseHead}
			if row.BaseAt != nil {
				cp.At = *row.BaseAt
			}
			return cp, nil
		}
	}
	return nil, nil
}

func turnCheckpoint(t *ent.Turn) *Checkpoint {
	cp := &Checkpoint{Commit: t.CheckpointCommit, Head: t.CheckpointHead}
	if t.CheckpointAt != nil {
		cp.At = *t.CheckpointAt
	}
	return cp
}

// working reports whether a session is running a turn, read now.
func (s *Service) working(ctx context.Context, id string) (bool, error) {
	return s.store.Client.AgentSession.Query().
		Where(agentsession.ID(id), agentsession.StatusEQ(agentsession.StatusWORKING)).Exist(ctx)
}
