package lineage

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/ent/sessionfork"
	"tuttid/ent/turn"
)

// ForkPoint is where a session was forked from: a turn (forks "from here")
// or the whole conversation (TurnID "").
type ForkPoint struct {
	TurnID   string
	Children []*ent.AgentSession // oldest first
}

// childrenSQL selects the direct forks of a session. Its arguments are the
// workspace id and the session id.
const childrenSQL = `SELECT child_agent_session_id FROM workspace_agent_session_forks
 WHERE workspace_id = ? AND parent_agent_session_id = ?`

// ForkPoints returns the points a session was forked from, in three
// queries whatever the number of forks: turns in the order of the
// session's turns, then the whole-conversation forks. A fork whose turn the
// session no longer has (or whose turn is still pending: ListedTurn) comes
// after the turns it does have.
func ForkPoints(ctx context.Context, c *ent.Client, workspaceID, sessionID string) ([]ForkPoint, error) {
	forks, err := c.SessionFork.Query().
		Where(sessionfork.WorkspaceID(workspaceID), sessionfork.ParentAgentSessionID(sessionID)).
		Order(ent.Asc(sessionfork.FieldForkedAtUnixMs), ent.Asc(sessionfork.FieldID)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("query the session's forks: %w", err)
	}
	if len(forks) == 0 {
		return []ForkPoint{}, nil
	}
	kids, err := c.AgentSession.Query().
		Where(agentsession.WorkspaceID(workspaceID), in(agentsession.FieldID, childrenSQL, workspaceID, sessionID)).
		All(ctx)
	if err != nil {
		return nil, fmt.Errorf("load the session's forks: %w", err)
	}
	turnIDs, err := c.Turn.Query().Where(turn.AgentSessionID(sessionID), ListedTurn()).
		Order(ent.Asc(turn.FieldStartedAt), ent.Asc(turn.FieldID)).Select(turn.FieldTurnID).Strings(ctx)
	if err != nil {
		return nil, fmt.Errorf("load the session's turns: %w", err)
	}
	byID := make(map[string]*ent.AgentSession, len(kids))
	for _, k := range kids {
		byID[k.ID] = k
	}
	position := make(map[string]int, len(turnIDs))
	for i, id := range turnIDs {
		position[id] = i
	}

	var points []ForkPoint
	index := map[string]int{} // turn id -> its point in points
	for _, f := range forks {
		kid, ok := byID[f.ChildAgentSessionID]
		if !ok {
			continue
		}
		i, ok := index[f.ForkTurnID]
		if !ok {
			i = len(points)
			index[f.ForkTurnID] = i
			points = append(points, ForkPoint{TurnID: f.ForkTurnID})
		}
		points[i].Children = append(points[i].Children, kid)
	}
	// points is in order of each point's first fork; a stable sort by
	// place in the conversation keeps that order among unknown turns.
	rank := func(p ForkPoint) int {
		if p.TurnID == "" {
			return len(turnIDs) + 1
		}
		if i, ok := position[p.TurnID]; ok {
			return i
		}
		return len(turnIDs)
	}
	slices.SortStableFunc(points, func(a, b ForkPoint) int { return cmp.Compare(rank(a), rank(b)) })
	return nonNil(points), nil
}
