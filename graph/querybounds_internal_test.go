package graph

import (
	"os"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql/introspection"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

func TestCountFields(t *testing.T) {
	for _, tc := range []struct {
		name  string
		query string
		limit int
		want  int
	}{
		{"fields and subfields", `{ a b { c d { e } } }`, 100, 5},
		{"aliases count as fields", `{ x: a y: a z: a }`, 100, 3},
		{"inline fragments count their fields", `{ ... on Query { a b } c }`, 100, 3},
		{"a fragment counts where spread and where defined", `{ ...F ...F } fragment F on Query { a b }`, 100, 6},
		{"nested spreads multiply", `{ ...F ...F } fragment F on Query { ...G ...G ...G } fragment G on Query { a }`, 100, 6 + 3 + 1},
		{"an unknown fragment counts nothing", `{ a ...Nope }`, 100, 1},
		{"a cycle counts once", `{ ...F } fragment F on Query { a ...G } fragment G on Query { b ...F }`, 100, 2 + 2 + 1},
		{"saturates at limit+1", `{ a b c d e f }`, 3, 4},
		{"every operation counts", `query A { a } query B { b c }`, 100, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := parser.ParseQuery(&ast.Source{Input: tc.query})
			if err != nil {
				t.Fatal(err)
			}
			if got := countFields(doc, tc.limit); got != tc.want {
				t.Errorf("countFields = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestCountFieldsFragmentBomb(t *testing.T) {
	// F0 spreads F1 twice, ... F39 spreads F40 twice: 2^40 fields.
	var b strings.Builder
	b.WriteString("{ ...F0 }\n")
	for i := range 40 {
		b.WriteString("fragment F" + itoa(i) + " on Query { ...F" + itoa(i+1) + " ...F" + itoa(i+1) + " }\n")
	}
	b.WriteString("fragment F40 on Query { a }\n")
	doc, err := parser.ParseQuery(&ast.Source{Input: b.String()})
	if err != nil {
		t.Fatal(err)
	}
	if got := countFields(doc, maxQueryFields); got != maxQueryFields+1 {
		t.Errorf("countFields = %d, want the saturated %d", got, maxQueryFields+1)
	}
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
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
		fields := countFields(doc, maxQueryFields)
		t.Logf("%s: %d tokens (bound %d), %d fields (bound %d)", name, tokens, maxQueryTokens, fields, maxQueryFields)
		if tokens*4 > maxQueryTokens || fields*3 > maxQueryFields {
			t.Errorf("%s is too near the bounds", name)
		}
		if err := checkQuery(query); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
