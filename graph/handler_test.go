package graph_test

import (
	"testing"
)

// TestHandlerLimits: the handler the tests run is the server's, limits
// included.
func TestHandlerLimits(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.workspace("ws")
	for _, tc := range []struct{ name, query, want string }{
		{"over the complexity limit",
			`{ workspaces { sessions(first: 500) { edges { node { messages(first: 500) { edges { node { id text role } } } } } } } }`,
			"COMPLEXITY_LIMIT_EXCEEDED"},
		{"a connection costed by its page",
			`{ workspace(id: "ws") { sessions(first: 200) { edges { node { turnConnection(first: 100) { edges { node { id } } } } } } } }`,
			"COMPLEXITY_LIMIT_EXCEEDED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if code := e.postErr(tc.query); code != tc.want {
				t.Errorf("answered %s, want %s", code, tc.want)
			}
		})
	}
	var out struct {
		Schema struct{ QueryType struct{ Name string } } `json:"__schema"`
	}
	e.post(`{ __schema { queryType { name } } }`, &out)
	if out.Schema.QueryType.Name != "Query" {
		t.Errorf("introspection: %+v", out)
	}
}

// TestIntLiteralOutOfRange: an Int64 literal beyond 64 bits (afterSeq of
// 2^63 written in the operation) is refused as invalid_input before the
// complexity limit reads the arguments, where gqlparser panicked on it (a
// recovered panic, answered internal); in a field's arguments and inside a
// fragment. A variable of the same value is refused by coercion.
func TestIntLiteralOutOfRange(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.workspace("ws")
	for _, q := range []string{
		`subscription { activity(workspaceId: "ws", afterSeq: 9223372036854775808) { seq } }`,
		`subscription { activity(workspaceId: "ws", afterSeq: 99999999999999999999999) { seq } }`,
		`subscription { ...F } fragment F on Subscription { activity(workspaceId: "ws", afterSeq: 9223372036854775808) { seq } }`,
	} {
		if code := e.postErr(q); code != "invalid_input" {
			t.Errorf("%s: answered %s, want invalid_input", q, code)
		}
	}
}
