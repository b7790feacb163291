package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"tuttid/ent"
	"tuttid/lineage"
	"tuttid/session"
)

// LineageTooling is what the lineage tooling resolvers call (compare,
// fork points, rename/archive, subtree delete); session.Service is one.
type LineageTooling interface {
	Compare(ctx context.Context, workspaceID, a, b string) (*lineage.Comparison, error)
	ForkPoints(ctx context.Context, a *ent.AgentSession) ([]lineage.ForkPoint, error)
	Update(ctx context.Context, in session.UpdateInput) (*ent.AgentSession, error)
	DeleteSubtree(ctx context.Context, workspaceID, sessionID string) (string, error)
	SessionMessages(ctx context.Context, sessionID string) ([]*ent.Message, error)
}

func forkPoints(points []lineage.ForkPoint) []*lineage.ForkPoint {
	out := make([]*lineage.ForkPoint, len(points))
	for i := range points {
		out[i] = &points[i]
	}
	return out
}

// prefillComparison loads, when the query asks for the messages of the
// comparison's turns, both sessions' messages in two queries for the
// Turn.messages resolvers below (instead of one query per turn).
func (r *Resolver) prefillComparison(ctx context.Context, c *lineage.Comparison) error {
	if !selectsBelow(ctx, "messages", "sharedTurns", "aOnly", "bOnly") {
		return nil
	}
	for _, side := range []struct {
		id    string
		turns [][]*ent.Turn
	}{{c.A.ID, [][]*ent.Turn{c.SharedTurns, c.AOnly}}, {c.B.ID, [][]*ent.Turn{c.BOnly}}} {
		msgs, err := r.Tooling.SessionMessages(ctx, side.id)
		if err != nil {
			return err
		}
		for _, ts := range side.turns {
			turnMessagesFrom(ctx).fill(ts, msgs)
		}
	}
	return nil
}

// selectsBelow reports whether any of the fields named parents, selected
// in the field being resolved, selects name.
func selectsBelow(ctx context.Context, name string, parents ...string) bool {
	op := graphql.GetOperationContext(ctx)
	for _, f := range graphql.CollectFieldsCtx(ctx, nil) {
		if !contains(parents, f.Name) {
			continue
		}
		for _, sub := range graphql.CollectFields(op, f.Selections, nil) {
			if sub.Name == name {
				return true
			}
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
