package fork

import (
	"context"
	"errors"
	"time"

	"tuttid/agent"
	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/ent/forkjournal"
	"tuttid/ent/message"
	"tuttid/ent/turn"
	"tuttid/session"
)

var errTargetTaken = errors.New("target session id taken")

type persistInput struct {
	in          Input
	fingerprint string
	parent      *ent.AgentSession
	parentTitle string // as the parent is shown: its title or the fallback
	childID     string
	title       string
	settings    agent.ComposerSettings
	visible     bool
	rf          agent.RuntimeForkResult
	journalID   int // the attempt's journal entry, marked done with the child
}

// persist stores the child session, its lineage row, its turns and messages
// in one transaction, so that nothing is stored unless all is (a child
// without lineage, or lineage without history, would be a fork that lies).
func (s *Service) persist(ctx context.Context, p persistInput) (*ent.AgentSession, *ent.SessionFork, error) {
	now := s.now()
	forkedAt := p.rf.Fork.ForkedAt
	if forkedAt.IsZero() {
		forkedAt = now
	}
	var child *ent.AgentSession
	var row *ent.SessionFork
	generated := p.in.Title == nil
	if generated {
		defer s.lockTitle(p.parent.WorkspaceID, p.parentTitle)()
	}
	err := s.store.WithTx(ctx, func(tx *ent.Tx) error {
		// The id was free when the saga chose it; a concurrent fork with the
		// same target may have taken it since.
		taken, err := tx.AgentSession.Query().Where(agentsession.ID(p.childID)).Exist(ctx)
		if err != nil {
			return err
		}
		if taken {
			return errTargetTaken
		}
		turns, source, err := s.history(ctx, tx, p)
		if err != nil {
			return err
		}
		if generated {
			if p.title, err = nextTitle(ctx, tx.Client(), p.parent, p.parentTitle); err != nil {
				return err
			}
		}
		rc := map[string]any{
			"forkedFromAgentSessionId":    p.parent.ID,
			"forkedFromProviderSessionId": p.parent.ProviderSessionID,
			"forkedFromTurnId":            p.in.LastTurnID,
			"forkParentTitle":             p.parentTitle,
			"forkedAtUnixMs":              forkedAt.UnixMilli(),
			"forkMessageSource":           source,
		}
		// The child is what the provider says it is: its model, model
		// provider and cwd come from the fork's response.
		rc = session.WithThreadMetadata(rc, p.rf.Session)
		cwd := p.rf.Session.Cwd
		if cwd == "" {
			cwd = p.parent.Cwd
		}
		child, err = session.CreateRecord(ctx, tx.Client(), session.NewSession{
			ID: p.childID, WorkspaceID: p.parent.WorkspaceID, Provider: p.parent.Provider,
			ProviderSessionID: p.rf.Session.ProviderSessionID, Title: p.title, Cwd: cwd,
			Status: childStatus(p.rf.Session.Status), Visible: p.visible, Settings: p.settings,
			RuntimeContext: rc, At: now,
		})
		if err != nil {
			return err
		}
		row, err = tx.SessionFork.Create().
			SetWorkspaceID(p.parent.WorkspaceID).
			SetChildAgentSessionID(child.ID).SetParentAgentSessionID(p.parent.ID).
			SetChildProviderSessionID(child.ProviderSessionID).SetParentProviderSessionID(p.parent.ProviderSessionID).
			SetProvider(p.parent.Provider).SetForkTurnID(p.in.LastTurnID).
			SetForkRequestID(p.in.RequestID).SetForkRequestFingerprint(p.fingerprint).
			SetForkedAtUnixMs(forkedAt.UnixMilli()).
			Save(ctx)
		if err != nil {
			return err
		}
		if err := tx.ForkJournal.UpdateOneID(p.journalID).SetState(forkjournal.StateDone).
			SetChildProviderSessionID(child.ProviderSessionID).SetUpdatedAt(now).Exec(ctx); err != nil {
			return err
		}
		if err := insertTurns(ctx, tx, child, turns, now); err != nil {
			return err
		}
		var msgs []agent.RuntimeMessage
		for _, t := range turns {
			msgs = append(msgs, t.Messages...)
		}
		if _, err := session.InsertHistory(ctx, tx, child, msgs, now); err != nil {
			return err
		}
		// Re-read: message versions moved the row's counter.
		child, err = tx.AgentSession.Get(ctx, child.ID)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	// Detach the entities from the committed transaction, so that callers
	// (and subscribers of the published events) can query and update them.
	return child.Unwrap(), row.Unwrap(), nil
}

// history is the child's history: the provider's turns when it returned
// them, else the parent's cached turns and messages through the boundary.
func (s *Service) history(ctx context.Context, tx *ent.Tx, p persistInput) ([]agent.RuntimeTurn, string, error) {
	if p.rf.EmptyParent {
		return nil, SourceEmptyParent, nil
	}
	if p.rf.HistoryAvailable {
		turns := make([]agent.RuntimeTurn, len(p.rf.Turns))
		for i, t := range p.rf.Turns {
			msgs := make([]agent.RuntimeMessage, len(t.Messages))
			for j, m := range t.Messages {
				if m.TurnID == "" {
					m.TurnID = t.ID
				}
				msgs[j] = m
			}
			t.Messages = msgs
			turns[i] = t
		}
		return turns, SourceProviderTurns, nil
	}
	turns, err := copyParentHistory(ctx, tx, p.parent.ID, p.in.LastTurnID)
	return turns, SourceParentCache, err
}

// copyParentHistory applies the design's fallback rules: only completed
// persisted turns, all of them or through lastTurnID inclusive, and no
// in-progress messages.
func copyParentHistory(ctx context.Context, tx *ent.Tx, parentID, lastTurnID string) ([]agent.RuntimeTurn, error) {
	pturns, err := tx.Turn.Query().Where(turn.AgentSessionID(parentID)).
		Order(ent.Asc(turn.FieldStartedAt), ent.Asc(turn.FieldID)).All(ctx)
	if err != nil {
		return nil, err
	}
	var keep []agent.RuntimeTurn
	index := map[string]int{}
	for _, t := range pturns {
		if t.Status == turn.StatusCOMPLETED {
			index[t.TurnID] = len(keep)
			keep = append(keep, agent.RuntimeTurn{ID: t.TurnID, Status: agent.TurnCompleted})
		}
		if lastTurnID != "" && t.TurnID == lastTurnID {
			break
		}
	}
	if len(keep) == 0 {
		return nil, nil
	}
	// Filtered here rather than with an IN list, which a long session would
	// push past SQLite's bound-parameter limit.
	msgs, err := tx.Message.Query().
		Where(message.AgentSessionID(parentID), message.StatusNEQ("in_progress")).
		Order(ent.Asc(message.FieldVersion)).All(ctx)
	if err != nil {
		return nil, err
	}
	for _, m := range msgs {
		i, ok := index[m.TurnID]
		if !ok {
			continue
		}
		keep[i].Messages = append(keep[i].Messages, agent.RuntimeMessage{
			ID: m.MessageID, TurnID: m.TurnID, Role: m.Role, Kind: m.Kind, Text: m.Text,
			Content: m.Content, Status: m.Status,
		})
	}
	return keep, nil
}

func insertTurns(ctx context.Context, tx *ent.Tx, child *ent.AgentSession, turns []agent.RuntimeTurn, now time.Time) error {
	if len(turns) == 0 {
		return nil
	}
	for start := 0; start < len(turns); start += session.BulkRows {
		end := min(start+session.BulkRows, len(turns))
		builders := make([]*ent.TurnCreate, 0, end-start)
		for i := start; i < end; i++ {
			t := turns[i]
			// Distinct start times keep the copied turns in their order.
			at := now.Add(time.Duration(i-len(turns)) * time.Microsecond)
			builders = append(builders, tx.Turn.Create().SetTurnID(t.ID).SetAgentSessionID(child.ID).
				SetStatus(turnStatus(t.Status)).SetError(t.Error).SetStartedAt(at).SetCompletedAt(at))
		}
		if err := tx.Turn.CreateBulk(builders...).Exec(ctx); err != nil {
			return err
		}
	}
	return nil
}

func turnStatus(s agent.TurnStatus) turn.Status {
	switch s {
	case agent.TurnInterrupted:
		return turn.StatusINTERRUPTED
	case agent.TurnFailed:
		return turn.StatusFAILED
	case agent.TurnInProgress:
		// A child is never mid-turn: Codex closes a running boundary.
		return turn.StatusINTERRUPTED
	}
	return turn.StatusCOMPLETED
}

func childStatus(s agent.ThreadStatus) agentsession.Status {
	if s == agent.ThreadSystemError {
		return agentsession.StatusFAILED
	}
	return agentsession.StatusREADY
}
