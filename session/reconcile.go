package session

import (
	"context"

	"tuttid/apperr"
	"tuttid/ent/agentsession"
)

// Reconcile runs at start: turns that were running when the previous
// process stopped died with its Codex child. Each is settled from Codex's
// record (settleRunningTurns), leftover items end failed, and the sessions
// are READY again; otherwise they would stay WORKING forever and refuse
// every send and fork.
func (s *Service) Reconcile(ctx context.Context) error {
	now := s.now()
	turns, err := s.settleRunningTurns(ctx)
	if err != nil {
		return err
	}
	if err := s.store.Client.Message.Update().Where(inProgressItems()).
		SetStatus("failed").SetUpdatedAt(now).Exec(ctx); err != nil {
		return apperr.Storage(err, "close the items of the previous run")
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
		return apperr.Storage(err, "reset the sessions of the previous run")
	}
	if turns > 0 || sessions > 0 || approvals > 0 {
		s.log.WarnContext(ctx, "settled work left running by the previous run", "turns", turns, "sessions_ready", sessions, "approvals_cancelled", approvals)
	}
	return nil
}
