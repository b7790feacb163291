package lineage

import (
	"context"
	"errors"
	"fmt"

	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/ent/sessionfork"
	"tuttid/ent/turn"
)

// Comparison is two sessions set side by side from where they part.
type Comparison struct {
	A, B *ent.AgentSession
	// CommonAncestor is the nearest session that both are or descend
	// from; nil when they are in different trees.
	CommonAncestor *ent.AgentSession
	// SharedTurns is A's turns of the common prefix of the two sessions'
	// turns (Codex keeps a forked turn's id, so a shared turn has the same
	// id in both); AOnly and BOnly are each side's turns after it, oldest
	// first.
	SharedTurns, AOnly, BOnly []*ent.Turn
}

// SharedTurnCount is the length of the common prefix.
func (c *Comparison) SharedTurnCount() int { return len(c.SharedTurns) }

// bothChainsSQL selects two sessions and all their ancestors. Its
// arguments are the two session ids and the workspace id.
const bothChainsSQL = `WITH RECURSIVE up(id) AS (
  SELECT CAST(? AS VARCHAR) UNION SELECT CAST(? AS VARCHAR)
  UNION
  SELECT f.parent_agent_session_id
    ` + upStep + `
)
SELECT id FROM up`

// Compare sets two sessions of one workspace side by side, in at most
// three queries whatever the depth of their trees or the number of turns:
// the lineage rows above both, both sessions' turns, and the common
// ancestor when it is neither of them.
func Compare(ctx context.Context, c *ent.Client, a, b *ent.AgentSession) (*Comparison, error) {
	if a.WorkspaceID != b.WorkspaceID {
		return nil, errors.New("compare: the sessions are in different workspaces")
	}
	ws := a.WorkspaceID
	forks, err := c.SessionFork.Query().
		Where(sessionfork.WorkspaceID(ws), in(sessionfork.FieldChildAgentSessionID, bothChainsSQL, a.ID, b.ID, ws)).
		All(ctx)
	if err != nil {
		return nil, fmt.Errorf("query the lineage of both sessions: %w", err)
	}
	parentOf := make(map[string]string, len(forks))
	for _, f := range forks {
		parentOf[f.ChildAgentSessionID] = f.ParentAgentSessionID
	}
	inB := map[string]bool{}
	for _, id := range chainOf(b.ID, parentOf) {
		inB[id] = true
	}
	out := &Comparison{A: a, B: b}
	if id, ok := nearestCommon(chainOf(a.ID, parentOf), inB); ok {
		switch id {
		case a.ID:
			out.CommonAncestor = a
		case b.ID:
			out.CommonAncestor = b
		default:
			anc, err := c.AgentSession.Query().Where(agentsession.WorkspaceID(ws), agentsession.ID(id)).Only(ctx)
			if err != nil && !ent.IsNotFound(err) {
				return nil, fmt.Errorf("load the common ancestor: %w", err)
			}
			out.CommonAncestor = anc
		}
	}

	// A pending turn is left out, as from every turn list: its id vanishes
	// when Codex names the turn.
	turns, err := c.Turn.Query().Where(turn.AgentSessionIDIn(a.ID, b.ID), ListedTurn()).
		Order(ent.Asc(turn.FieldStartedAt), ent.Asc(turn.FieldID)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("load both sessions' turns: %w", err)
	}
	var at, bt []*ent.Turn
	for _, t := range turns {
		if t.AgentSessionID == a.ID {
			at = append(at, t)
		}
		if t.AgentSessionID == b.ID {
			bt = append(bt, t)
		}
	}
	n := 0
	for n < len(at) && n < len(bt) && at[n].TurnID == bt[n].TurnID {
		n++
	}
	out.SharedTurns, out.AOnly, out.BOnly = nonNil(at[:n]), nonNil(at[n:]), nonNil(bt[n:])
	return out, nil
}

// chainOf is a session and its ancestors, nearest first; seen stops a
// corrupt cycle.
func chainOf(id string, parentOf map[string]string) []string {
	out := []string{id}
	seen := map[string]bool{id: true}
	for p, ok := parentOf[id]; ok && !seen[p]; p, ok = parentOf[p] {
		seen[p] = true
		out = append(out, p)
	}
	return out
}

// nearestCommon is the first of chain in set.
func nearestCommon(chain []string, set map[string]bool) (string, bool) {
	for _, id := range chain {
		if set[id] {
			return id, true
		}
	}
	return "", false
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
