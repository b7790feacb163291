package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
)

// selected says whether the query asks for the named field of the object
// the current field resolves to (a connection's totalCount costs a count).
func selected(ctx context.Context, name string) bool {
	if graphql.GetFieldContext(ctx) == nil {
		return true // not under a GraphQL operation: assume it is wanted
	}
	for _, f := range graphql.CollectFieldsCtx(ctx, nil) {
		if f.Name == name {
			return true
		}
	}
	return false
}
