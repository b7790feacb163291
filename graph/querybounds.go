package graph

import (
	"context"
	"fmt"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/lexer"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator/core"
	"github.com/vektah/gqlparser/v2/validator/rules"

	"tuttid/apperr"
)

// Bounds on an operation, checked before gqlparser validates it. Validation
// is quadratic in the fields that share a response name (every pair is
// compared, and fields with different arguments give an error per pair):
// unbounded, 3,000 aliases `a: workspace(id:"N"){id}` (89 KB) answered
// 1 GB of errors from 10 GiB of memory, 30,000 `a: __typename` took 44 s.
// All the GUI's operations together have about 600 tokens and 411 fields, the
// full introspection query 181 tokens and 468 fields (fragments expanded;
// TestQueryBoundsMargin).
const (
	// maxQueryTokens bounds the lexical tokens of a document, comments
	// included.
	maxQueryTokens = 15_000
	// maxQueryFields bounds the fields of a document, each fragment spread
	// counted as the fields it expands to: at most about a million pairs
	// to compare (measured at the bound, every pair conflicting: under a
	// second and 300 MiB allocated; TestQueryBoundsWorstCaseWithin).
	maxQueryFields = 1_500
	// maxValidationErrors bounds the errors an answer lists; one more says
	// that the rest were left out.
	maxValidationErrors = 100
)

// queryBounds refuses, before validation, a document over maxQueryTokens or
// maxQueryFields with request_too_large. Documents already in the query
// cache were validated and are not checked again.
type queryBounds struct {
	cache graphql.Cache[*ast.QueryDocument]
}

var (
	_ graphql.HandlerExtension          = queryBounds{}
	_ graphql.OperationParameterMutator = queryBounds{}
)

func (queryBounds) ExtensionName() string                   { return "QueryBounds" }
func (queryBounds) Validate(graphql.ExecutableSchema) error { return nil }
func (b queryBounds) MutateOperationParameters(ctx context.Context, p *graphql.RawParams) *gqlerror.Error {
	if p.Query == "" {
		return nil
	}
	if _, ok := b.cache.Get(ctx, p.Query); ok {
		return nil
	}
	return checkQuery(p.Query)
}

// checkQuery answers the bound a query exceeds, or nil. A query that does
// not parse is left to the executor, which says why.
func checkQuery(query string) *gqlerror.Error {
	src := &ast.Source{Input: query}
	if tokens := countTokens(src, maxQueryTokens); tokens > maxQueryTokens {
		return tooLarge(fmt.Sprintf("the operation has more than %d tokens", maxQueryTokens))
	}
	doc, err := parser.ParseQueryWithTokenLimit(src, maxQueryTokens)
	if err != nil {
		return nil
	}
	if fields := countFields(doc, maxQueryFields); fields > maxQueryFields {
		return tooLarge(fmt.Sprintf("the operation has more than %d fields (fragments counted as often as they are spread)", maxQueryFields))
	}
	return nil
}

func tooLarge(msg string) *gqlerror.Error {
	return &gqlerror.Error{Message: msg, Extensions: map[string]any{"code": string(apperr.RequestTooLarge)}}
}

// countTokens counts src's tokens, comments included, up to limit+1; a
// lexical error ends the count (the parser reports it).
func countTokens(src *ast.Source, limit int) int {
	lx := lexer.New(src)
	n := 0
	for n <= limit {
		tok, err := lx.ReadToken()
		if err != nil || tok.Kind == lexer.EOF {
			break
		}
		n++
	}
	return n
}

// countFields counts the fields of doc's operations and fragment
// definitions, a fragment spread counting as the fields of its fragment,
// up to limit+1. Each fragment is counted once (a cycle counts nothing:
// validation reports it).
func countFields(doc *ast.QueryDocument, limit int) int {
	c := fieldCounter{doc: doc, limit: limit, fragments: map[string]int{}}
	n := 0
	for _, op := range doc.Operations {
		n = c.add(n, c.selections(op.SelectionSet))
	}
	for _, f := range doc.Fragments {
		n = c.add(n, c.fragment(f.Name))
	}
	return n
}

type fieldCounter struct {
	doc       *ast.QueryDocument
	limit     int
	fragments map[string]int // -1 while being counted
}

// add saturates at limit+1, so that fragments spread exponentially often
// do not overflow.
func (c *fieldCounter) add(a, b int) int { return min(a+b, c.limit+1) }

func (c *fieldCounter) selections(set ast.SelectionSet) int {
	n := 0
	for _, s := range set {
		switch s := s.(type) {
		case *ast.Field:
			n = c.add(n, c.add(1, c.selections(s.SelectionSet)))
		case *ast.InlineFragment:
			n = c.add(n, c.selections(s.SelectionSet))
		case *ast.FragmentSpread:
			n = c.add(n, c.fragment(s.Name))
		}
		if n > c.limit {
			break
		}
	}
	return n
}

func (c *fieldCounter) fragment(name string) int {
	if n, ok := c.fragments[name]; ok {
		return max(n, 0)
	}
	def := c.doc.Fragments.ForName(name)
	if def == nil {
		return 0
	}
	c.fragments[name] = -1
	n := c.selections(def.SelectionSet)
	c.fragments[name] = n
	return n
}

// cappedRules is gqlparser's default rules, each reporting through a
// shared count that keeps the first maxValidationErrors errors of one
// validation and one that says more were left out. gqlgen calls it once a
// validation.
func cappedRules() *rules.Rules {
	n := 0
	capped := func(addError core.AddErrFunc) core.AddErrFunc {
		return func(options ...core.ErrorOption) {
			n++
			switch {
			case n <= maxValidationErrors:
				addError(options...)
			case n == maxValidationErrors+1:
				addError(core.Message("too many validation errors: the first %d are listed", maxValidationErrors))
			}
		}
	}
	r := rules.NewDefaultRules()
	for name, rule := range r.GetInner() {
		r.ReplaceRule(name, func(observers *core.Events, addError core.AddErrFunc) {
			rule(observers, capped(addError))
		})
	}
	return r
}
