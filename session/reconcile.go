package session

import (
	"context"

	"tuttid/ent/agentsession"
	"tuttid/ent/message"
	"tuttid/ent/turn"
)

// Reconcile runs at start: turns that were running when the previous
// process stopped died with its Codex child, so they are marked FAILED and
// their sessions READY again; otherwise they would stay WORKING forever and
// refuse every send and fork.
func (s *Service) Reconcile(ctx context.Context) error {
	now := s.now()
	turns, err := s.store.Client.Turn.Update().
		Where(turn.StatusEQ(turn.StatusIN_PROGRESS)).
		SetStatus(turn.StatusFAILED).SetError("tuttid stopped while the turn was running").SetCompletedAt(now).
		Save(ctx)
	if err != nil {
		return storageErr(err, "close the turns of the previous run")
	}
	if err := s.store.Client.Message.Update().Where(message.Status("in_progress")).
		SetStatus("failed").SetUpdatedAt(now).Exec(ctx); err != nil {
		return storageErr(err, "close the items of the previous run")
	}
	approvals, err := s.cancelApprovalsOfPreviousRun(ctx, now)
	if err != nil {
		return err
	}
	sessions, err := s.store.Client.AgentSession.Update().
		Where(agentsession.StatusEQ(agentsession.StatusWORKING)).
		SetStatus(agentsession.StatusREADY).SetUpdatedAt(now).
		Save(ctx)
	if err != nil {
		return storageErr(err, "reset the sessions of the previous run")
	}
	if turns > 0 || sessions > 0 || approvals > 0 {
		s.log.WarnContext(ctx, "closed work left running by the previous run", "turns_failed", turns, "sessions_ready", sessions, "approvals_cancelled", approvals)
	}
	return nil
}
