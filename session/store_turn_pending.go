package session

import (
	"context"
	"log/slog"
	"time"

	"tuttid/agent"
	"tuttid/ent"
	"tuttid/ent/turn"
	"tuttid/keylock"
	"tuttid/lineage"
	"tuttid/store"
)

// A turn is stored before turn/start is written, under a client-side id
// (pendingTurnPrefix), so that a crash between the request and its reply
// leaves a record: the first turn id Codex names for the session replaces
// it (adoptPendingTurn), and at start one left over is matched with the
// turn Codex has and tuttid does not (settlePendingTurns).

// The prefix and its test live in lineage, whose reads leave pending
// turns out too (lineage.ListedTurn).
const pendingTurnPrefix = lineage.PendingTurnPrefix

func isPendingTurn(turnID string) bool { return lineage.IsPendingTurn(turnID) }

// pendingTurns stores the turn a send makes before Codex names it, and
// swaps it for the turn Codex reports.
type pendingTurns struct {
	db     *store.Store
	guards *keylock.Locks
	log    *slog.Logger
	now    func() time.Time
	newID  func() string
}

// store stores a session's turn about to be sent.
func (pt *pendingTurns) store(ctx context.Context, a *ent.AgentSession) (*ent.Turn, error) {
	return pt.db.Client.Turn.Create().SetTurnID(pendingTurnPrefix + pt.newID()).SetAgentSessionID(a.ID).
		SetStatus(turn.StatusIN_PROGRESS).SetStartedAt(pt.now()).Save(ctx)
}

// drop removes a pending turn whose turn/start failed (unless
// Codex's id took its place meanwhile).
func (pt *pendingTurns) drop(ctx context.Context, a *ent.AgentSession, p *ent.Turn) {
	defer pt.guards.Lock("turn\x00" + a.ID)()
	_, err := pt.db.Client.Turn.Delete().Where(turn.ID(p.ID), turn.TurnIDHasPrefix(pendingTurnPrefix)).Exec(ctx)
	if err != nil {
		pt.log.ErrorContext(ctx, "send: pending turn not removed", "session", a.ID, "turn", p.TurnID, "err", err)
	}
}

// adopt: a turn id Codex names for a session with a pending
// turn, and that tuttid does not have, is that turn's: the pending row is
// replaced by one with Codex's id and the same start.
func (pt *pendingTurns) adopt(ctx context.Context, a *ent.AgentSession, turnID string) error {
	if isPendingTurn(turnID) {
		return nil
	}
	defer pt.guards.Lock("turn\x00" + a.ID)()
	p, err := pt.db.Client.Turn.Query().
		Where(turn.AgentSessionID(a.ID), turn.TurnIDHasPrefix(pendingTurnPrefix), turn.StatusEQ(turn.StatusIN_PROGRESS)).
		Order(ent.Asc(turn.FieldStartedAt)).First(ctx)
	if ent.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	known, err := pt.db.Client.Turn.Query().Where(turn.AgentSessionID(a.ID), turn.TurnID(turnID)).Exist(ctx)
	if err != nil || known {
		return err // an older turn's id: the pending turn waits for its own
	}
	_, err = pt.replace(ctx, p, turnID, turn.StatusIN_PROGRESS, "")
	return err
}

// replace swaps a pending turn for Codex's turn id in one
// transaction (turn ids are immutable).
func (pt *pendingTurns) replace(ctx context.Context, p *ent.Turn, turnID string, status turn.Status, reason string) (*ent.Turn, error) {
	var t *ent.Turn
	err := pt.db.WithTx(ctx, func(tx *ent.Tx) error {
		if err := tx.Turn.DeleteOneID(p.ID).Exec(ctx); err != nil {
			return err
		}
		c := tx.Turn.Create().SetTurnID(turnID).SetAgentSessionID(p.AgentSessionID).SetStatus(status).
			SetError(reason).SetStartedAt(p.StartedAt)
		if status != turn.StatusIN_PROGRESS {
			c.SetCompletedAt(pt.now())
		}
		var err error
		t, err = c.Save(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	return t.Unwrap(), nil
}

// settlePendingTurns runs at start, before the running turns are settled:
// a pending turn the previous run left is the turn Codex has and tuttid
// does not (its newest such), which then settles like any running turn;
// when Codex has none, turn/start never reached it and the pending turn
// is removed. When Codex cannot be read, it fails with unsettledMark and
// is revisited.
func (s *Service) settlePendingTurns(ctx context.Context) error {
	pending, err := s.store.Client.Turn.Query().
		Where(runningTurns(), turn.TurnIDHasPrefix(pendingTurnPrefix)).WithSession().All(ctx)
	if err != nil {
		return err
	}
	pending = s.own.turns(pending)
	for _, p := range pending {
		if _, err := s.settlePending(ctx, p, turn.StatusIN_PROGRESS); err != nil {
			return err
		}
	}
	return nil
}

// settlePending matches one pending turn with Codex's record; found, it
// takes Codex's id with status, and the turn with that id is returned.
func (s *Service) settlePending(ctx context.Context, p *ent.Turn, status turn.Status) (*ent.Turn, error) {
	a := p.Edges.Session
	id, found, err := s.unknownCodexTurn(ctx, a)
	switch {
	case err != nil:
		s.log.WarnContext(ctx, "reconcile: Codex's record unavailable for a turn being started", "session", a.ID, "err", err)
		s.lanes.setAllSettled(false)
		return nil, p.Update().SetStatus(turn.StatusFAILED).SetCompletedAt(s.now()).
			SetError("tuttid stopped while the turn was starting" + unsettledMark).Exec(ctx)
	case !found:
		s.log.WarnContext(ctx, "reconcile: a turn being started never reached Codex; removed", "session", a.ID, "turn", p.TurnID)
		return nil, s.store.Client.Turn.DeleteOneID(p.ID).Exec(ctx)
	}
	reason := ""
	if status == turn.StatusFAILED {
		reason = "tuttid stopped while the turn was running" + unsettledMark
		s.lanes.setAllSettled(false)
	}
	t, err := s.pending.replace(ctx, p, id, status, reason)
	if err != nil {
		return nil, err
	}
	s.log.WarnContext(ctx, "reconcile: a turn being started when tuttid stopped found in Codex", "session", a.ID, "turn", id)
	return t, nil
}

// unknownCodexTurn is the newest turn of a session's thread that tuttid
// has not stored. The whole history is read: this happens only after a
// crash between turn/start and its reply.
func (s *Service) unknownCodexTurn(ctx context.Context, a *ent.AgentSession) (string, bool, error) {
	if s.rt == nil || a.ProviderSessionID == "" {
		return "", false, nil
	}
	turns, err := s.rt.History(ctx, agent.HistoryInput{Provider: a.Provider, ThreadID: a.ProviderSessionID})
	if err != nil {
		return "", false, err
	}
	stored, err := s.store.Client.Turn.Query().Where(turn.AgentSessionID(a.ID)).Select(turn.FieldTurnID).Strings(ctx)
	if err != nil {
		return "", false, err
	}
	known := map[string]bool{}
	for _, id := range stored {
		known[id] = true
	}
	for i := len(turns) - 1; i >= 0; i-- {
		if !known[turns[i].ID] {
			return turns[i].ID, true, nil
		}
	}
	return "", false, nil
}
