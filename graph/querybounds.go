package graph

import (
	"context"
	"fmt"
	"math"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/lexer"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator/core"
	"github.com/vektah/gqlparser/v2/validator/rules"

	"tuttid/apperr"
)

// Bounds on an operation, checked before gqlparser validates it.
// Validation compares every two fields that share a response name (an
// alias, or the field's name) in one selection set, their subfields
// included, and reports an error per conflicting pair: unbounded, 3,000
// aliases `a: workspace(id:"N"){id}` (89 KB) answered 1 GB of errors from
// 10 GiB of memory, 30,000 `a: __typename` took 44 s. Fields with distinct
// names cost linear work only: a subscription with 2,000 aliases of one
// field is fine. All the GUI's operations together have about 600 tokens,
// 411 fields and 419 comparisons, the full introspection query 468
// fields (fragments expanded; TestQueryBoundsMargin).
const (
	// maxQueryTokens bounds the lexical tokens of a document, comments
	// included.
	maxQueryTokens = 20_000
	// maxQueryFields bounds the fields of a document, each fragment spread
	// counted as the fields it expands to. The complexity limit, checked
	// after validation, prices fields by what they read (complexity.go).
	maxQueryFields = 5_000
	// maxSameNameComparisons bounds the pairs of fields sharing a response
	// name that validation compares (counted as the sum over each response
	// name of a selection set of the square of its fields, subfields of
	// fields of one name taken together). At the bound, every pair
	// conflicting: about 0.1 s and 30 MiB allocated
	// (TestQueryBoundsWorstCaseWithin).
	maxSameNameComparisons = 250_000
	// maxValidationErrors bounds the errors an answer lists; one more says
	// that the rest were left out.
	maxValidationErrors = 100
)

// queryBounds refuses, before validation, a document over maxQueryTokens,
// maxQueryFields or maxSameNameComparisons with request_too_large.
// Documents already in the query cache were validated and are not checked
// again.
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
	c := measure(doc, maxQueryFields)
	switch {
	case c.fields > maxQueryFields:
		return tooLarge(fmt.Sprintf("the operation has more than %d fields (fragments counted as often as they are spread)", maxQueryFields))
	case c.comparisons > maxSameNameComparisons:
		return tooLarge(fmt.Sprintf("the operation repeats response names too often: validation would compare about %d pairs of fields sharing one (at most %d); use distinct aliases", c.comparisons, maxSameNameComparisons))
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

// cost is what validating a document takes.
type cost struct {
	// fields counts the fields with every fragment spread expanded, up to
	// the limit given to measure, plus one.
	fields int
	// comparisons is, over every selection set with its fragments expanded
	// and the subfields of its fields of one response name taken together,
	// the sum of the squares of the number of fields of each response
	// name: a bound on the pairs validation compares.
	comparisons int
}

// measure walks doc's operations and fragment definitions (validation
// checks both) with every fragment spread expanded, except a spread of a
// fragment being expanded already (a cycle, which validation reports). It
// stops once more than maxFields fields were seen, so a fragment spread
// exponentially often costs no more than that.
func measure(doc *ast.QueryDocument, maxFields int) cost {
	m := measurer{doc: doc, max: maxFields}
	for _, op := range doc.Operations {
		m.merged([]scoped{{set: op.SelectionSet}})
	}
	for _, f := range doc.Fragments {
		m.merged([]scoped{{set: f.SelectionSet, path: &fragmentPath{name: f.Name}}})
	}
	return m.cost
}

type measurer struct {
	doc  *ast.QueryDocument
	max  int
	cost cost
}

// scoped is a selection set and the fragments it was expanded from.
type scoped struct {
	set  ast.SelectionSet
	path *fragmentPath
}

type fragmentPath struct {
	name string
	up   *fragmentPath
}

func (p *fragmentPath) has(name string) bool {
	for ; p != nil; p = p.up {
		if p.name == name {
			return true
		}
	}
	return false
}

func (m *measurer) over() bool { return m.cost.fields > m.max }

// merged measures the selection sets of the fields of one response name
// (or a root) as one set.
func (m *measurer) merged(sets []scoped) {
	count := map[string]int{}
	var names []string // in order, for a deterministic walk
	subs := map[string][]scoped{}
	var collect func(set ast.SelectionSet, path *fragmentPath)
	collect = func(set ast.SelectionSet, path *fragmentPath) {
		for _, s := range set {
			if m.over() {
				return
			}
			switch s := s.(type) {
			case *ast.Field:
				m.cost.fields++
				name := s.Alias
				if name == "" {
					name = s.Name
				}
				if count[name] == 0 {
					names = append(names, name)
				}
				count[name]++
				if len(s.SelectionSet) > 0 {
					subs[name] = append(subs[name], scoped{set: s.SelectionSet, path: path})
				}
			case *ast.InlineFragment:
				collect(s.SelectionSet, path)
			case *ast.FragmentSpread:
				if def := m.doc.Fragments.ForName(s.Name); def != nil && !path.has(s.Name) {
					collect(def.SelectionSet, &fragmentPath{name: s.Name, up: path})
				}
			}
		}
	}
	for _, s := range sets {
		collect(s.set, s.path)
	}
	for _, name := range names {
		k := count[name]
		m.cost.comparisons = min(m.cost.comparisons+k*k, math.MaxInt/2)
	}
	for _, name := range names {
		if m.over() {
			return
		}
		if len(subs[name]) > 0 {
			m.merged(subs[name])
		}
	}
}

// cappedRules is gqlparser's default rules, each reporting through a
// shared count that keeps the first maxValidationErrors errors of one
// validation and one that says more were left out. gqlgen calls it once a
// validation, and swaps in its own FieldsOnCorrectType and ScalarLeafs
// (uncapped, but at most an error a field, so bounded by maxQueryFields).
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
