package codebranch

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	entsql "entgo.io/ent/dialect/sql"

	"tuttid/ent"
	"tuttid/ent/sessioncode"
	"tuttid/ent/turn"
	"tuttid/gitrepo"
)

// Checkpoint is what a turn's end recorded: the session's files as a
// commit, the HEAD of that moment, and when.
type Checkpoint struct {
	Commit string
	Head   string
	At     time.Time
}

// SessionStarted records the files of a new session in a repository (its
// start checkpoint, so its first turn's diff is that turn's own) and
// makes its SHARED code row. A session outside a repository gets nothing.
// A failure is logged, never returned: code is an addition to a session,
// not a condition of it.
func (s *Service) SessionStarted(ctx context.Context, a *ent.AgentSession) {
	defer s.guards.Lock(a.ID)()
	r, err := s.repo(ctx, repoAt{dir: a.Cwd})
	if err != nil {
		if !errors.Is(err, gitrepo.ErrNotARepository) {
			s.log.WarnContext(ctx, "code: cannot read the session's repository", "session", a.ID, "err", err)
		}
		return
	}
	cp, err := r.Checkpoint(ctx, gitrepo.CheckpointOptions{
		Ref: gitrepo.SessionRef(a.ID, "start"), Index: s.indexPath(a.ID), Time: s.now(),
	})
	if err != nil {
		s.log.WarnContext(ctx, "code: start checkpoint failed", "session", a.ID, "err", err)
		cp = gitrepo.Checkpoint{}
	}
	s.remember(a.ID, cp)
	if _, err := s.ensureRow(ctx, a, r, cp.Commit); err != nil {
		s.log.WarnContext(ctx, "code: cannot store the session's code", "session", a.ID, "err", err)
	}
}

// ensureRow returns the session's code row, making a SHARED one (with
// start as its start_commit) when it has none.
func (s *Service) ensureRow(ctx context.Context, a *ent.AgentSession, r *gitrepo.Repo, start string) (*ent.SessionCode, error) {
	err := s.store.Client.SessionCode.Create().
		SetAgentSessionID(a.ID).SetWorkspaceID(a.WorkspaceID).SetMode(sessioncode.ModeSHARED).
		SetRepositoryRoot(r.Root).SetCommonDir(r.CommonDir).SetStartCommit(start).
		SetCreatedAt(s.now()).SetUpdatedAt(s.now()).
		OnConflictColumns(sessioncode.FieldAgentSessionID).DoNothing().Exec(ctx)
	// DoNothing reports an existing row as sql.ErrNoRows.
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	return s.store.Client.SessionCode.Query().Where(sessioncode.AgentSessionID(a.ID)).Only(ctx)
}

// Row is the session's code row, or nil when it has none (outside a
// repository).
func (s *Service) Row(ctx context.Context, sessionID string) (*ent.SessionCode, error) {
	row, err := s.store.Client.SessionCode.Query().Where(sessioncode.AgentSessionID(sessionID)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	return row, err
}

// TurnEnded records the session's files at the end of turnID (completed,
// interrupted or failed) under the turn's ref, and returns the checkpoint
// to store on the turn; ok is false outside a repository or when the
// checkpoint failed (logged: a turn never fails for its checkpoint). A
// turn that changed no file gets the previous checkpoint. The caller
// stores the result before the session turns READY.
func (s *Service) TurnEnded(ctx context.Context, a *ent.AgentSession, turnID string) (Checkpoint, bool) {
	defer s.guards.Lock(a.ID)()
	cp, err := s.turnCheckpoint(ctx, a, turnID)
	if err != nil {
		if !errors.Is(err, gitrepo.ErrNotARepository) {
			s.log.WarnContext(ctx, "code: turn checkpoint failed", "session", a.ID, "turn", turnID, "err", err)
		}
		return Checkpoint{}, false
	}
	return cp, cp.Commit != ""
}

func (s *Service) turnCheckpoint(ctx context.Context, a *ent.AgentSession, turnID string) (Checkpoint, error) {
	row, err := s.Row(ctx, a.ID)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("read the session's code: %w", err)
	}
	if row != nil && row.Mode == sessioncode.ModeWORKTREE && !row.WorktreePresent {
		return Checkpoint{}, nil // archived: its files are in archive_commit
	}
	r, err := s.repo(ctx, repoAt{dir: a.Cwd})
	if err != nil {
		return Checkpoint{}, err
	}
	if row == nil {
		// A session from before code rows, or a fork child nobody gave
		// one: from now on it has one (without a start checkpoint).
		if row, err = s.ensureRow(ctx, a, r, ""); err != nil {
			return Checkpoint{}, fmt.Errorf("store the session's code: %w", err)
		}
	}
	prev, err := s.previousCheckpoint(ctx, a.ID, turnID, row)
	if err != nil {
		return Checkpoint{}, err
	}
	now := s.now()
	opts := gitrepo.CheckpointOptions{
		Ref: gitrepo.TurnRef(a.ID, turnID), Previous: prev, Index: s.indexPath(a.ID), Time: now,
	}
	if last, ok := s.remembered(a.ID, prev); ok {
		opts.PreviousTree, opts.PreviousHead = last.Tree, last.Head
	}
	cp, err := r.Checkpoint(ctx, opts)
	if err != nil {
		return Checkpoint{}, err
	}
	s.remember(a.ID, cp)
	return Checkpoint{Commit: cp.Commit, Head: cp.Head, At: now}, nil
}

// previousCheckpoint is the checkpoint a turn's diff starts from: the
// latest checkpoint of an earlier turn of the session (other than turnID),
// else the session's start.
func (s *Service) previousCheckpoint(ctx context.Context, sessionID, turnID string, row *ent.SessionCode) (string, error) {
	q := s.store.Client.Turn.Query().Where(turn.AgentSessionID(sessionID), turn.CheckpointCommitNEQ(""), turn.TurnIDNEQ(turnID))
	var this *ent.Turn
	if t, err := s.store.Client.Turn.Query().Where(turn.AgentSessionID(sessionID), turn.TurnID(turnID)).Only(ctx); err == nil {
		this = t
		q = q.Where(turn.Or(turn.StartedAtLT(t.StartedAt), turn.And(turn.StartedAtEQ(t.StartedAt), turn.IDLT(t.ID))))
	} else if !ent.IsNotFound(err) {
		return "", fmt.Errorf("read the turn: %w", err)
	}
	prev, err := q.Order(turn.ByStartedAt(entsql.OrderDesc()), turn.ByID(entsql.OrderDesc())).First(ctx)
	if err != nil && !ent.IsNotFound(err) {
		return "", fmt.Errorf("read the previous checkpoint: %w", err)
	}
	if appliedBetween(row, prev, this) {
		return row.AppliedToCommit, nil
	}
	if prev != nil {
		return prev.CheckpointCommit, nil
	}
	if row != nil && row.StartCommit != "" {
		return row.StartCommit, nil
	}
	// A fork child's copied turns have no checkpoint of their own; the
	// session they were copied from has (Codex keeps a forked turn's id).
	inherited, err := s.inheritedCheckpoint(ctx, sessionID, turnID)
	if err != nil || inherited != "" {
		return inherited, err
	}
	if row != nil {
		return row.BaseCommit, nil
	}
	return "", nil
}

// appliedBetween: an apply into the session came after prev (nil: no
// earlier turn) and before this turn started, so this turn's diff starts
// from the files it left (markAppliedTo).
func appliedBetween(row *ent.SessionCode, prev, this *ent.Turn) bool {
	if row == nil || row.AppliedToAt == nil || row.AppliedToCommit == "" || this == nil {
		return false
	}
	at := *row.AppliedToAt
	return at.Before(this.StartedAt) && (prev == nil || prev.StartedAt.Before(at))
}

// inheritedCheckpoint is the latest checkpoint any session recorded for
// one of this session's turns before turnID: the fork point's, for a fork
// child whose own turns have none yet.
func (s *Service) inheritedCheckpoint(ctx context.Context, sessionID, turnID string) (string, error) {
	// The newest copied turns are the fork point's; a bound keeps the
	// query small on a long history.
	own := s.store.Client.Turn.Query().Where(turn.AgentSessionID(sessionID), turn.TurnIDNEQ(turnID)).
		Order(turn.ByStartedAt(entsql.OrderDesc())).Limit(500)
	ids, err := own.Select(turn.FieldTurnID).Strings(ctx)
	if err != nil {
		return "", fmt.Errorf("read the session's turns: %w", err)
	}
	if len(ids) == 0 {
		return "", nil
	}
	t, err := s.store.Client.Turn.Query().
		Where(turn.TurnIDIn(ids...), turn.AgentSessionIDNEQ(sessionID), turn.CheckpointCommitNEQ("")).
		Order(turn.ByStartedAt(entsql.OrderDesc()), turn.ByID(entsql.OrderDesc())).First(ctx)
	if ent.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read the fork point's checkpoint: %w", err)
	}
	return t.CheckpointCommit, nil
}
