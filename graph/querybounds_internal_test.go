package graph

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql/introspection"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

func TestMeasure(t *testing.T) {
	for _, tc := range []struct {
		name        string
		query       string
		max         int
		fields      int
		comparisons int
	}{
		{"distinct names cost one each", `{ a b { c d { e } } }`, 100, 5, 5},
		{"one response name: its square", `{ x: a x: b x: c }`, 100, 3, 9},
		{"an alias is the response name", `{ a a: b b: a }`, 100, 3, 4 + 1},
		{"subfields of one name are taken together", `{ a { x } a { x y } b { x } }`, 100, 7, 4 + 1 + (4 + 1) + 1},
		{"inline fragments are part of their set", `{ ... on Query { a b } a }`, 100, 3, 4 + 1},
		{"a fragment counts where spread and where defined", `{ ...F ...F } fragment F on Query { a b }`, 100, 6, 8 + 2},
		{"nested spreads multiply", `{ ...F ...F } fragment F on Query { ...G ...G ...G } fragment G on Query { a }`, 100, 6 + 3 + 1, 36 + 9 + 1},
		{"an unknown fragment counts nothing", `{ a ...Nope }`, 100, 1, 1},
		{"a cycle is cut where it closes", `{ ...F } fragment F on Query { a ...G } fragment G on Query { b ...F }`, 100, 2 + 2 + 2, 2 + 2 + 2},
		{"a cycle through a field is cut too", `{ ...F } fragment F on Query { a { ...F } }`, 100, 1 + 1, 1 + 1},
		{"every operation counts", `query A { a } query B { b c }`, 100, 3, 3},
		{"fields stop past the limit", `{ a b c d e f }`, 3, 4, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := parser.ParseQuery(&ast.Source{Input: tc.query})
			if err != nil {
				t.Fatal(err)
			}
			got := measure(doc, tc.max)
			if got.fields != tc.fields || (got.fields <= tc.max && got.comparisons != tc.comparisons) {
				t.Errorf("measure = %+v, want fields %d, comparisons %d", got, tc.fields, tc.comparisons)
			}
		})
	}
}

func TestMeasureFragmentBomb(t *testing.T) {
	// F0 spreads F1 twice, ... F39 spreads F40 twice: 2^40 fields.
	var b strings.Builder
	b.WriteString("{ ...F0 }\n")
	for i := range 40 {
		fmt.Fprintf(&b, "fragment F%d on Query { ...F%d ...F%d }\n", i, i+1, i+1)
	}
	b.WriteString("fragment F40 on Query { a }\n")
	doc, err := parser.ParseQuery(&ast.Source{Input: b.String()})
	if err != nil {
		t.Fatal(err)
	}
	if got := measure(doc, maxQueryFields); got.fields != maxQueryFields+1 {
		t.Errorf("measure = %+v, want fields saturated at %d", got, maxQueryFields+1)
	}
}

func TestCountTokens(t *testing.T) {
	for _, tc := range []struct {
		query string
		limit int
		want  int
	}{
		{`{ a }`, 10, 3},
		{`{ a: workspace(id: "1") { id } }`, 100, 13},
		{`# a comment counts: it costs a lexer's work too`, 10, 1},
		{`{ a b c d e f }`, 3, 4},
		{`{ "unterminated }`, 10, 1},
	} {
		if got := countTokens(&ast.Source{Input: tc.query}, tc.limit); got != tc.want {
			t.Errorf("countTokens(%q, %d) = %d, want %d", tc.query, tc.limit, got, tc.want)
		}
	}
}

// TestQueryBoundsMargin: the GUI's operations (all of ops.graphql in one
// document, a superset of any request it sends) and the full introspection
// query are well within the bounds.
func TestQueryBoundsMargin(t *testing.T) {
	ops, err := os.ReadFile("../web/ui/src/ops.graphql")
	if err != nil {
		t.Fatal(err)
	}
	for name, query := range map[string]string{
		"ops.graphql":   string(ops),
		"introspection": introspection.NewQuery(introspection.QueryOptions{OneOf: true}),
	} {
		src := &ast.Source{Input: query}
		tokens := countTokens(src, maxQueryTokens)
		doc, err := parser.ParseQuery(src)
		if err != nil {
			t.Fatal(err)
		}
		c := measure(doc, maxQueryFields)
		t.Logf("%s: %d tokens (bound %d), %d fields (bound %d), %d comparisons (bound %d)",
			name, tokens, maxQueryTokens, c.fields, maxQueryFields, c.comparisons, maxSameNameComparisons)
		if tokens*4 > maxQueryTokens || c.fields*4 > maxQueryFields || c.comparisons*4 > maxSameNameComparisons {
			t.Errorf("%s is too near the bounds", name)
		}
		if err := checkQuery(query); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
