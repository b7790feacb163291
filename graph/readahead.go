package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"tuttid/session"
)

// readAhead gives each query and mutation session's read-ahead, so that a
// list's per-row fields cost a constant number of queries. Subscriptions
// get none: they live long and would serve later events from their first
// reads.
func readAhead(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	if op := graphql.GetOperationContext(ctx).Operation; op != nil && op.Operation != ast.Subscription {
		ctx = session.WithReadAhead(ctx)
	}
	return next(ctx)
}
