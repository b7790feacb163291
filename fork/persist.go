package fork

import (
	"context"
	"errors"

	"tuttid/agent"
	"tuttid/codebranch"
	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/ent/forkjournal"
	"tuttid/ent/turn"
	"tuttid/session"
)

var errChildIDTaken = errors.New("the child session id is taken")

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
	// code is the child's code row, if any (code.go).
	code *codebranch.ForkCode
}

// persist stores the child session, its lineage row, its turns and messages
// in one transaction, so that nothing is stored unless all is (a child
// without lineage, or lineage without history, would be a fork that lies).
// The provider's history is spooled to local disk first, and read back
// page by page inside the transaction.
func (s *Service) persist(ctx context.Context, p persistInput) (*ent.AgentSession, *ent.SessionFork, session.Staged, error) {
	now := s.now()
	forkedAt := p.rf.Fork.ForkedAt
	if forkedAt.IsZero() {
		forkedAt = now
	}
	var child *ent.AgentSession
	var row *ent.SessionFork
	var staged session.Staged
	if p.rf.History != nil && !p.rf.EmptyParent {
		// Before the transaction: waiting on the provider must not hold the
		// write lock (spool.go).
		spooled, err := spoolHistory(ctx, s.spoolDir, p.rf.History)
		var se streamError
		switch {
		case errors.As(err, &se):
			// The one fallback point: the provider's stream failed.
			s.log.WarnContext(ctx, "fork: the provider's history stream failed; copying the parent's cached history",
				"workspace", p.parent.WorkspaceID, "session", p.parent.ID, "child_session", p.childID,
				"child_thread", p.rf.Session.ThreadID, "err", err)
			p.rf.History = nil
		case err != nil:
			return nil, nil, staged, err
		default:
			defer spooled.Close()
			p.rf.History = spooled
		}
	}
	generated := p.in.Title == nil
	if generated {
		defer s.lockTitle(p.parent.WorkspaceID, p.parentTitle)()
	}
	err := s.store.WithTx(ctx, func(tx *ent.Tx) error {
		// The id was free when the saga chose it; a concurrent fork with the
		// same child id may have taken it since.
		taken, err := tx.AgentSession.Query().Where(agentsession.ID(p.childID)).Exist(ctx)
		if err != nil {
			return err
		}
		if taken {
			return errChildIDTaken
		}
		if generated {
			if p.title, err = nextTitle(ctx, tx.Client(), p.parent, p.parentTitle); err != nil {
				return err
			}
		}
		rc := map[string]any{
			session.CtxForkedFromSessionID: p.parent.ID,
			session.CtxForkedFromThreadID:  p.parent.ProviderSessionID,
			session.CtxForkedFromTurnID:    p.in.LastTurnID,
			session.CtxForkParentTitle:     p.parentTitle,
			session.CtxForkedAtUnixMs:      forkedAt.UnixMilli(),
			session.CtxForkMessageSource:   messageSource(p.rf),
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
			InstanceID: p.parent.InstanceID, // Codex forks a thread only in the process that holds it
			ThreadID:   p.rf.Session.ThreadID, Title: p.title, Cwd: cwd,
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
		n, err := tx.ForkJournal.Update().Where(forkjournal.ID(p.journalID)).SetState(forkjournal.StateDone).
			SetChildProviderSessionID(child.ProviderSessionID).SetUpdatedAt(now).Save(ctx)
		if err := updatedOne(p.journalID, n, err); err != nil {
			return err
		}
		if err := p.code.Create(ctx, tx.Client(), now); err != nil {
			return err
		}
		if err := writeHistory(ctx, tx, child, p, now); err != nil {
			return err
		}
		// Re-read: message versions moved the row's counter.
		if child, err = tx.AgentSession.Get(ctx, child.ID); err != nil {
			return err
		}
		// Last: the outbox's insert locks nothing the fork holds long.
		staged, err = s.sessions.StageForked(ctx, tx, child, row)
		return err
	})
	if err != nil {
		return nil, nil, staged, err
	}
	// Detach the entities from the committed transaction, so that callers
	// (and subscribers of the published events) can query and update them.
	return child.Unwrap(), row.Unwrap(), staged, nil
}

// childTurnStatus is a child turn's status: a child is never mid-turn
// (Codex closes a running boundary), so a turn in progress is interrupted.
func childTurnStatus(s agent.TurnStatus) turn.Status {
	if st, ended := session.TurnStatusOf(s); ended {
		return st
	}
	return turn.StatusINTERRUPTED
}

func childStatus(s agent.ThreadStatus) agentsession.Status {
	if s == agent.ThreadSystemError {
		return agentsession.StatusFAILED
	}
	return agentsession.StatusREADY
}
