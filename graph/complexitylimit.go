package graph

import (
	"context"

	"github.com/99designs/gqlgen/complexity"
	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// complexityLimitExt is gqlgen's FixedComplexityLimit (the same answer,
// COMPLEXITY_LIMIT_EXCEEDED, 422, and stats: GetComplexityStats reads
// them), with the text marks no page
// turned into bytes settled at the top as a page each (settleText): a
// root field whose arguments do not parse (an afterSeq past Int64) is
// priced by gqlgen's default, which keeps its rows' marks; left so, they
// would read as millions and hide the argument's own invalid_input.
type complexityLimitExt struct {
	limit int
	es    graphql.ExecutableSchema
}

var _ interface {
	graphql.OperationContextMutator
	graphql.HandlerExtension
} = &complexityLimitExt{}

func (c *complexityLimitExt) ExtensionName() string { return "ComplexityLimit" }

func (c *complexityLimitExt) Validate(schema graphql.ExecutableSchema) error {
	c.es = schema
	return nil
}

func (c *complexityLimitExt) MutateOperationContext(ctx context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	op := opCtx.Doc.Operations.ForName(opCtx.OperationName)
	n := settleText(complexity.Calculate(ctx, c.es, op, opCtx.Variables))
	opCtx.Stats.SetExtension("ComplexityLimit", &extension.ComplexityStats{Complexity: n, ComplexityLimit: c.limit})
	if n > c.limit {
		err := gqlerror.Errorf("operation has complexity %d, which exceeds the limit of %d", n, c.limit)
		errcode.Set(err, "COMPLEXITY_LIMIT_EXCEEDED")
		return err
	}
	return nil
}

// settleText prices text marks left at the top as a page of messages each.
func settleText(n int) int {
	plain, texts := withText(n)
	return plain + texts*costMessagePage
}
