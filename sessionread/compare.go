package sessionread

import (
	"context"

	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/lineage"
)

// Compare sets two sessions of a workspace side by side from where they
// part (lineage.Compare); either missing is agent.session_not_found. With
// the turns' messages, the lists are bounded as an unpaged turn list is:
// over MaxTurnListBytes the comparison fails with result_too_large.
func (s *Reader) Compare(ctx context.Context, workspaceID, a, b string, withMessages bool) (*lineage.Comparison, error) {
	if _, err := s.RequireWorkspace(ctx, workspaceID); err != nil {
		return nil, err
	}
	sa, err := s.RequireSession(ctx, workspaceID, a)
	if err != nil {
		return nil, err
	}
	sb, err := s.RequireSession(ctx, workspaceID, b)
	if err != nil {
		return nil, err
	}
	c, err := lineage.Compare(ctx, s.store.Client, sa, sb)
	if err != nil {
		return nil, apperr.Storage(err, "compare the sessions")
	}
	if withMessages {
		if err := s.checkListBytes(ctx, c); err != nil {
			return nil, err
		}
	}
	// Both sides' turns are listed: their messages load per side, not per turn.
	turnsListed(ctx, append(append([]*ent.Turn{}, c.SharedTurns...), c.AOnly...))
	turnsListed(ctx, c.BOnly)
	return c, nil
}

// ForkPoints returns where a session was forked from (lineage.ForkPoints).
func (s *Reader) ForkPoints(ctx context.Context, a *ent.AgentSession) ([]lineage.ForkPoint, error) {
	points, err := lineage.ForkPoints(ctx, s.store.Client, a.WorkspaceID, a.ID)
	if err != nil {
		return nil, apperr.Storage(err, "read the session's fork points")
	}
	return points, nil
}

// checkListBytes fails a comparison whose listed turns' messages hold more
// than MaxTurnListBytes: a's shared and own turns, and b's own.
func (s *Reader) checkListBytes(ctx context.Context, c *lineage.Comparison) error {
	var total int64
	for _, side := range []struct {
		id    string
		turns []*ent.Turn
	}{{c.A.ID, c.SharedTurns}, {c.A.ID, c.AOnly}, {c.B.ID, c.BOnly}} {
		// In chunks: a long session's turn ids would pass SQLite's bound
		// on a statement's parameters.
		for start := 0; start < len(side.turns); start += MaxTurnList {
			sizes, err := s.turnSizes(ctx, side.id, side.turns[start:min(start+MaxTurnList, len(side.turns))])
			if err != nil {
				return err
			}
			if total += totalSize(sizes); total > MaxTurnListBytes {
				return apperr.New(apperr.ResultTooLarge,
					"the compared turns' messages hold more than %d MiB: compare without messages, then read each session's turns with turnConnection", MaxTurnListBytes>>20)
			}
		}
	}
	return nil
}
