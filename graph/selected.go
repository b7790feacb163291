package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// selected says whether the query asks for the field at path below the
// current field (a connection's totalCount costs a count; a turn list's
// messages bound its size).
func selected(ctx context.Context, path ...string) bool {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil {
		return true // not under a GraphQL operation: assume it is wanted
	}
	return selectedIn(graphql.GetOperationContext(ctx), fc.Field.Selections, path)
}

func selectedIn(op *graphql.OperationContext, set ast.SelectionSet, path []string) bool {
	for _, f := range graphql.CollectFields(op, set, nil) {
		if f.Name != path[0] {
			continue
		}
		if len(path) == 1 || selectedIn(op, f.Selections, path[1:]) {
			return true
		}
	}
	return false
}
