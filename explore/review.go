package explore

import (
	"context"
	"fmt"
	"time"

	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/ent/exploration"
	"tuttid/ent/explorationbranch"
	"tuttid/ent/turn"
)

// Review has Codex review a branch's change since the fork point
// (session.Review: Codex's review/start on a throwaway fork of the
// branch's thread, so the branch's conversation is left as it was). It
// answers at once with the branch reviewing; the review runs in the
// background and EXPLORATION_UPDATED says when it ended (review or
// reviewError). A review already running is not started twice; a branch
// running a turn is agent.session_busy.
func (s *Service) Review(ctx context.Context, ref BranchRef) (*Branch, error) {
	if err := ref.check(); err != nil {
		return nil, err
	}
	v, b, err := s.branch(ctx, ref)
	if err != nil {
		return nil, err
	}
	if b.Session == nil {
		return nil, apperr.New(apperr.InvalidInput, "branch %q has no session (%s): there is nothing to review", b.Row.Name, b.State)
	}
	if b.Session.Status == agentsession.StatusWORKING {
		return nil, apperr.New(apperr.SessionBusy, "branch %q is running a turn; review it when the turn ended", b.Row.Name)
	}
	instructions, err := s.reviewInstructions(ctx, v)
	if err != nil {
		return nil, err
	}
	// Only one review of a branch at a time: the row changes only when no
	// review runs.
	n, err := s.store.Client.ExplorationBranch.Update().
		Where(explorationbranch.ID(b.Row.ID), explorationbranch.Or(explorationbranch.ReviewingAtIsNil(), explorationbranch.ReviewedAtNotNil())).
		SetReviewingAt(s.now()).ClearReviewedAt().SetReview("").SetReviewError("").Save(ctx)
	if err != nil {
		return nil, apperr.Storage(err, "record the review")
	}
	if n == 1 {
		s.updated(ctx, v.Exploration)
		ws, sessionID, row := v.WorkspaceID, b.Session.ID, b.Row.ID
		s.background(func(ctx context.Context) {
			ctx, cancel := context.WithTimeout(ctx, reviewTimeout)
			defer cancel()
			text, err := s.sessions.Review(ctx, ws, sessionID, instructions)
			up := s.store.Client.ExplorationBranch.UpdateOneID(row).SetReviewedAt(s.now())
			if err != nil {
				up.SetReviewError(apperr.From(err).Message)
				s.log.WarnContext(ctx, "explore: a branch's review failed", "exploration", v.ID, "branch", ref.BranchName, "err", err)
			} else {
				up.SetReview(text)
			}
			if err := up.Exec(context.WithoutCancel(ctx)); err != nil {
				s.log.ErrorContext(ctx, "explore: a branch's review not recorded", "exploration", v.ID, "branch", ref.BranchName, "err", err)
			}
			s.updated(context.WithoutCancel(ctx), v.Exploration)
		})
	}
	// The answer is the branch as read, with its review as it stands now
	// (this one, or one already running): the row, not the whole view
	// again (its change sizes are git reads of every branch).
	if b.Row, err = s.store.Client.ExplorationBranch.Get(ctx, b.Row.ID); err != nil {
		return nil, apperr.Storage(err, "read the branch")
	}
	return b, nil
}

// reviewTimeout bounds a review (the reviewer runs git and reads files).
const reviewTimeout = 10 * time.Minute

// reviewInstructions is what the reviewer is asked: the branch's change
// against the fork point's checkpoint (the whole change, new files too).
func (s *Service) reviewInstructions(ctx context.Context, v *View) (string, error) {
	base := "HEAD"
	if v.LastTurnID != "" {
		t, err := s.store.Client.Turn.Query().
			Where(turn.AgentSessionID(v.ParentAgentSessionID), turn.TurnID(v.LastTurnID)).Only(ctx)
		if err != nil && !ent.IsNotFound(err) {
			return "", apperr.Storage(err, "read the explored turn")
		}
		if t != nil && t.CheckpointCommit != "" {
			base = t.CheckpointCommit
		}
	}
	return fmt.Sprintf("Review the code changes this branch made since it was forked from %s. "+
		"Run `git diff %s` to see the changes to tracked files and `git status --short` to find new files, "+
		"and read the new files. Provide prioritized, actionable findings.", base, base), nil
}

// interruptReviews ends, at start, the reviews a stopped tuttid left
// running: they failed (review again).
func (s *Service) interruptReviews(ctx context.Context) error {
	_, err := s.store.Client.ExplorationBranch.Update().
		Where(explorationbranch.ReviewingAtNotNil(), explorationbranch.ReviewedAtIsNil(),
			explorationbranch.HasExplorationWith(exploration.HasParentWith(agentsession.InstanceID(s.instance)))).
		SetReviewedAt(s.now()).SetReviewError("tuttid stopped during the review; review again").Save(ctx)
	if err != nil {
		return fmt.Errorf("explore: end the reviews left running: %w", err)
	}
	return nil
}
