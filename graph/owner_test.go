package graph_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"tuttid/agent/agenttest"
)

// checkOwner fails the test when a mutation the schema does not mark
// @owner makes the runtime act on a session (send, steer, interrupt,
// fork, archive): with several instances it would run on whichever one
// received it, not on the one whose Codex holds the session (the server
// forwards only what @owner marks). Every graph test runs under it
// (agenttest's runtime or the real Codex), so a new command's tests catch
// a missing mark.
func checkOwner(t *testing.T, sessionCalls func() int) graphql.OperationMiddleware {
	return func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		oc := graphql.GetOperationContext(ctx)
		if oc.Operation == nil || oc.Operation.Operation != ast.Mutation {
			return next(ctx)
		}
		var unmarked []string
		for _, f := range graphql.CollectFields(oc, oc.Operation.SelectionSet, []string{"Mutation"}) {
			if f.Definition == nil || f.Definition.Directives.ForName("owner") == nil {
				unmarked = append(unmarked, f.Name)
			}
		}
		if len(unmarked) == 0 {
			return next(ctx)
		}
		before := sessionCalls()
		// A mutation runs when its response handler is called.
		answer := next(ctx)
		return func(ctx context.Context) *graphql.Response {
			resp := answer(ctx)
			if n := sessionCalls(); n != before {
				t.Errorf("mutation %s made %d runtime call(s) on a session without @owner in the schema", strings.Join(unmarked, ", "), n-before)
			}
			return resp
		}
	}
}

// fakeSessionCalls counts agenttest's calls that act on an existing
// session.
func fakeSessionCalls(rt *agenttest.Runtime) int {
	return len(rt.Sent()) + len(rt.Steers()) + len(rt.Interrupted()) + rt.ForkCalls() + len(rt.Archived())
}

// codexSessionCalls counts the requests written to the real Codex that
// act on an existing thread (reads left out: ingestion makes some on its
// own, between operations).
type codexSessionCalls struct{ n atomic.Int64 }

func (c *codexSessionCalls) sent(method string) {
	switch method {
	case "turn/start", "turn/steer", "turn/interrupt", "thread/fork", "thread/archive":
		c.n.Add(1)
	}
}

func (c *codexSessionCalls) count() int { return int(c.n.Load()) }
