package graph_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"

	"tuttid/graph"
)

// aliases is an operation of n aliases of field.
func aliases(n int, field string) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		fmt.Fprintf(&b, " a%d: %s", i, field)
	}
	b.WriteString(" }")
	return b.String()
}

const (
	xField      = `exploration(workspaceId: "ws", agentSessionId: "s", explorationId: "x")`
	sessionF    = `session(workspaceId: "ws", id: "s")`
	rankedXSub  = `{ id state ranking { name } branches { name rank filesChanged linesAdded linesDeleted check { state output } } }`
	checksXSub  = `{ branches { checks { id state output } } }`
	patchSub    = `{ code { changes { files { path } patch } } }`
	listedCodes = `{ workspace(id: "ws") { sessions(first: 500) { edges { node { id code { changes { files { path } } } } } } } }`
)

// TestComplexityCostsWhatFieldsRead: a field costs what its resolver reads
// (rows, git, Codex), so that requests that cost tuttid seconds are over
// the limit and refused with COMPLEXITY_LIMIT_EXCEEDED before anything
// runs, where each of them used to cost a field: the 1,000
// aliases of an exploration with its ranking (36 s on 24 branches), and
// others of the same shape. Just under the limit is allowed: the limit is
// a budget, not a ban (server's BenchmarkComplexityLimit measures what a
// request at the limit costs).
func TestComplexityCostsWhatFieldsRead(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.workspace("ws")
	for _, tc := range []struct {
		name  string
		query string
		over  bool
	}{
		{"the issue's request: 900 aliases of an exploration's ranking", aliases(900, xField+`{ ranking { name } }`), true},
		{"30 explorations ranking", aliases(30, xField+`{ ranking { name } }`), true},
		{"2 explorations shown ranked", aliases(2, xField+rankedXSub), true},
		{"an exploration shown ranked", aliases(1, xField+rankedXSub), false},
		{"the 20 explorations of a session ranked (160 worktrees)", aliases(1, sessionF+`{ explorations { ranking { name } } }`), true},
		{"the explorations of a session listed, 20 times", aliases(20, sessionF+`{ explorations { id state branches { name } winner { name } } }`), false},
		{"1,000 aliases of a session's explorations", aliases(1000, sessionF+`{ explorations { id } }`), true},
		{"every check's output of 5 explorations", aliases(5, xField+checksXSub), true},
		{"every check's output of 4 explorations", aliases(4, xField+checksXSub), false},
		{"100 sessions' changes with their patch", aliases(100, sessionF+patchSub), true},
		{"a page of 500 sessions' changes", listedCodes, true},
		{"500 branches of sessions", aliases(500, sessionF+`{ code { branch } }`), true},
		{"100 turns' diffs of 20 turns", aliases(100, sessionF+`{ turnConnection(last: 20) { edges { node { diff { files { path } } } } } }`), true},
		{"30 fork trees", aliases(30, `forkTree(workspaceId: "ws", agentSessionId: "s") { depth }`), true},
		{"30 comparisons", aliases(30, `compareSessions(workspaceId: "ws", a: "s", b: "t") { sharedTurnCount }`), true},
		{"1,000 reads of Codex's models", aliases(1000, `models { id }`), true},
		{"200 mutations", "mutation " + aliases(200, `logoutCodex { signedIn }`), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := graph.Complexity(context.Background(), tc.query, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			if over := got > graph.ComplexityLimit; over != tc.over {
				t.Fatalf("complexity %d (limit %d): over %v, want %v", got, graph.ComplexityLimit, over, tc.over)
			}
			t.Logf("complexity %d", got)
			if tc.over {
				if code := e.postErr(tc.query); code != "COMPLEXITY_LIMIT_EXCEEDED" {
					t.Errorf("answered %s, want COMPLEXITY_LIMIT_EXCEEDED", code)
				}
			}
		})
	}
}

// guiOperations are the GUI's operations, one document (the files share
// fragments).
func guiOperations(t *testing.T) string {
	t.Helper()
	var doc strings.Builder
	for _, f := range []string{"ops.graphql", "explore.graphql", "approvals.graphql"} {
		b, err := os.ReadFile("../web/ui/src/" + f)
		if err != nil {
			t.Fatal(err)
		}
		doc.Write(b)
		doc.WriteString("\n")
	}
	return doc.String()
}

// TestGUIOperationsUnderComplexityLimit: every operation the GUI sends,
// with the page sizes it asks (web/ui/src/state), stays under the limit,
// with room for the largest: a page of 200 listed sessions each with its
// worktree's changes.
func TestGUIOperationsUnderComplexityLimit(t *testing.T) {
	t.Parallel()
	doc := guiOperations(t)
	parsed, err := parser.ParseQuery(&ast.Source{Input: doc})
	if err != nil {
		t.Fatal(err)
	}
	// The GUI's variables (web/ui/src/state/useShownSession.ts: PAGE 20).
	vars := map[string]any{"ws": "ws", "id": "s", "s": "s", "x": "x", "a": "s", "b": "t", "last": 20, "before": "c", "after": "c", "afterSeq": 1}
	if len(parsed.Operations) < 20 {
		t.Fatalf("%d operations read, want the GUI's", len(parsed.Operations))
	}
	for _, op := range parsed.Operations {
		got, err := graph.Complexity(context.Background(), doc, op.Name, vars)
		if err != nil {
			t.Fatalf("%s: %v", op.Name, err)
		}
		t.Logf("%-28s %6d", op.Name, got)
		if got > graph.ComplexityLimit {
			t.Errorf("%s: complexity %d, over the limit %d", op.Name, got, graph.ComplexityLimit)
		}
	}
}
