package explore

import (
	"context"
	"errors"
	"time"

	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/ent/exploration"
	"tuttid/ent/explorationbranch"
	"tuttid/ent/turn"
)

// StopResult is what stopping an exploration did.
type StopResult struct {
	// Interrupted names the branches whose running turn was interrupted.
	Interrupted []string
	// Failed names the branches whose turn could not be interrupted, with
	// why; the rest were stopped.
	Failed []BranchFailure
	View   *View
}

// interruptWait bounds the retries of an interrupt that Codex answers
// "no active turn" while tuttid's turn is still in progress: the turn was
// sent and Codex has not begun it yet.
const interruptWait = 5 * time.Second

// Stop stops an exploration, for the person who has seen enough: it is
// marked stopped, so that no branch's first turn starts after it (queued
// ones become STOPPED, and so does one still forking once its fork is
// made); every branch's running turn is interrupted (Codex's
// turn/interrupt) and its running check stopped (INTERRUPTED). A turn the
// stop interrupted gets no check. Nothing is lost: each branch keeps its
// session, worktree and turns, and a message sent to a branch starts it as
// any session. A branch whose turn could not be interrupted is reported;
// the others are stopped. Stopping again interrupts what runs again.
func (s *Service) Stop(ctx context.Context, ref BranchRef) (*StopResult, error) {
	if err := ref.checkExploration(); err != nil {
		return nil, err
	}
	v, err := s.Exploration(ctx, ref.WorkspaceID, ref.ParentSessionID, ref.ExplorationID)
	if err != nil {
		return nil, err
	}
	// From here the caller going away must not leave it half stopped.
	ctx = context.WithoutCancel(ctx)
	if err := s.markStopped(ctx, v.Exploration); err != nil {
		return nil, err
	}
	s.updated(ctx, v.Exploration)
	if v, err = s.Exploration(ctx, ref.WorkspaceID, ref.ParentSessionID, ref.ExplorationID); err != nil {
		return nil, err
	}
	out := &StopResult{}
	for _, b := range v.Branches {
		if b.Session == nil {
			continue
		}
		if ended := s.checks.stop(b.Session.ID); ended != nil {
			awaitEnd(ctx, ended)
		} else {
			if err := s.endStale(ctx, b.Session.ID); err != nil {
				out.Failed = append(out.Failed, failureOf(b.Row.Name, apperr.Storage(err, "end the branch's check")))
			}
		}
		if b.Session.Status != agentsession.StatusWORKING {
			continue
		}
		interrupted, err := s.interruptRunning(ctx, b.Session)
		if err != nil {
			out.Failed = append(out.Failed, failureOf(b.Row.Name, err))
			s.log.WarnContext(ctx, "explore: a branch's turn not interrupted", "exploration", v.ID, "branch", b.Row.Name, "err", err)
			continue
		}
		if interrupted {
			out.Interrupted = append(out.Interrupted, b.Row.Name)
		}
	}
	s.log.InfoContext(ctx, "explore: stopped", "exploration", v.ID, "interrupted", out.Interrupted, "failed", len(out.Failed))
	s.updated(ctx, v.Exploration)
	if out.View, err = s.Exploration(ctx, ref.WorkspaceID, ref.ParentSessionID, ref.ExplorationID); err != nil {
		return nil, err
	}
	return out, nil
}

// markStopped records the stop and stops the queued branches, under the
// gate's lock: a pump that started a branch's turn has stored it before
// (the stop then interrupts it), and one after sees the stop.
func (s *Service) markStopped(ctx context.Context, x *ent.Exploration) error {
	s.gate.mu.Lock()
	defer s.gate.mu.Unlock()
	err := s.store.WithTx(ctx, func(tx *ent.Tx) error {
		now := s.now()
		if err := tx.Exploration.Update().Where(exploration.ID(x.ID), exploration.StoppedAtIsNil()).
			SetStoppedAt(now).SetUpdatedAt(now).Exec(ctx); err != nil {
			return err
		}
		return tx.ExplorationBranch.Update().
			Where(explorationbranch.ExplorationID(x.ID), explorationbranch.StateEQ(explorationbranch.StateQueued)).
			SetState(explorationbranch.StateStopped).Exec(ctx)
	})
	if err != nil {
		return apperr.Storage(err, "stop the exploration")
	}
	return nil
}

// interruptRunning interrupts the session's turn in progress, if it has
// one; Codex answering that it has not begun the turn yet is tried again
// for up to interruptWait.
func (s *Service) interruptRunning(ctx context.Context, a *ent.AgentSession) (bool, error) {
	deadline := time.Now().Add(interruptWait)
	for {
		t, err := s.store.Client.Turn.Query().
			Where(turn.AgentSessionID(a.ID), turn.StatusEQ(turn.StatusIN_PROGRESS)).
			Order(ent.Desc(turn.FieldStartedAt)).First(ctx)
		if ent.IsNotFound(err) {
			return false, nil // it ended meanwhile
		}
		if err != nil {
			return false, apperr.Storage(err, "read the branch's running turn")
		}
		_, err = s.sessions.Interrupt(ctx, a.WorkspaceID, a.ID, t.TurnID)
		var e *apperr.Error
		if err == nil || !errors.As(err, &e) || e.Code != apperr.SessionNotBusy || time.Now().After(deadline) {
			return err == nil, err
		}
		time.Sleep(100 * time.Millisecond)
	}
}
