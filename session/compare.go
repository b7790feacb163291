package session

import (
	"context"

	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/lineage"
)

// Compare sets two sessions of a workspace side by side from where they
// part (lineage.Compare); either missing is agent.session_not_found.
func (s *Service) Compare(ctx context.Context, workspaceID, a, b string) (*lineage.Comparison, error) {
	if _, err := s.mustWorkspace(ctx, workspaceID); err != nil {
		return nil, err
	}
	sa, err := s.mustSession(ctx, workspaceID, a)
	if err != nil {
		return nil, err
	}
	sb, err := s.mustSession(ctx, workspaceID, b)
	if err != nil {
		return nil, err
	}
	c, err := lineage.Compare(ctx, s.store.Client, sa, sb)
	if err != nil {
		return nil, apperr.Storage(err, "compare the sessions")
	}
	// Both sides' turns are listed: their messages load per side, not per turn.
	ra := readAheadFrom(ctx)
	ra.turnsListed(append(append([]*ent.Turn{}, c.SharedTurns...), c.AOnly...))
	ra.turnsListed(c.BOnly)
	return c, nil
}

// ForkPoints returns where a session was forked from (lineage.ForkPoints).
func (s *Service) ForkPoints(ctx context.Context, a *ent.AgentSession) ([]lineage.ForkPoint, error) {
	points, err := lineage.ForkPoints(ctx, s.store.Client, a.WorkspaceID, a.ID)
	if err != nil {
		return nil, apperr.Storage(err, "read the session's fork points")
	}
	return points, nil
}
