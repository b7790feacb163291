package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"tuttid/codebranch"
	"tuttid/readahead"
)

// readAhead gives each query and mutation its read-ahead (package readahead), so that a
// list's per-row fields cost a constant number of queries, and each query
// codebranch's read memo (a checkout's SHARED changes read once).
// Subscriptions get none: they live long and would serve later events from
// their first reads.
func readAhead(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	if op := graphql.GetOperationContext(ctx).Operation; op != nil && op.Operation != ast.Subscription {
		ctx = readahead.With(ctx)
		if op.Operation == ast.Query {
			// Not a mutation's: it may change the files it reads again.
			ctx = codebranch.WithReadMemo(ctx)
		}
	}
	return next(ctx)
}
