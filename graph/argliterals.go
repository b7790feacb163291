package graph

import (
	"context"
	"strconv"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// intLiterals refuses an operation with an integer literal that does not
// fit in 64 bits before the complexity limit reads the arguments:
// gqlparser's ArgumentMap panics on one (afterSeq: 9223372036854775808 was
// a recovered panic, a 500). A variable of the same value is refused by
// coercion already (presentError maps it to invalid_input).
type intLiterals struct{}

var (
	_ graphql.HandlerExtension        = intLiterals{}
	_ graphql.OperationContextMutator = intLiterals{}
)

func (intLiterals) ExtensionName() string                   { return "IntLiterals" }
func (intLiterals) Validate(graphql.ExecutableSchema) error { return nil }

func (intLiterals) MutateOperationContext(_ context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation == nil {
		return nil
	}
	w := literalWalk{doc: oc.Doc, seen: map[string]bool{}}
	return w.selections(oc.Operation.SelectionSet)
}

// literalWalk visits every argument of an operation once, fragments
// included (each named fragment once, whatever its number of spreads).
type literalWalk struct {
	doc  *ast.QueryDocument
	seen map[string]bool
}

func (w literalWalk) selections(set ast.SelectionSet) *gqlerror.Error {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			for _, a := range s.Arguments {
				if err := checkIntLiterals(a.Value); err != nil {
					return err
				}
			}
			if err := w.selections(s.SelectionSet); err != nil {
				return err
			}
		case *ast.InlineFragment:
			if err := w.selections(s.SelectionSet); err != nil {
				return err
			}
		case *ast.FragmentSpread:
			if w.seen[s.Name] || w.doc == nil {
				continue
			}
			w.seen[s.Name] = true
			if f := w.doc.Fragments.ForName(s.Name); f != nil {
				if err := w.selections(f.SelectionSet); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func checkIntLiterals(v *ast.Value) *gqlerror.Error {
	if v == nil {
		return nil
	}
	if v.Kind == ast.IntValue {
		if _, err := strconv.ParseInt(v.Raw, 10, 64); err != nil {
			e := gqlerror.ErrorPosf(v.Position, "%s is out of range for a 64-bit integer", v.Raw)
			e.Extensions = map[string]any{"code": "invalid_input"}
			return e
		}
	}
	for _, c := range v.Children {
		if err := checkIntLiterals(c.Value); err != nil {
			return err
		}
	}
	return nil
}
