package server_test

import (
	"fmt"
	"strings"
	"testing"

	"tuttid/agent/agenttest"
	"tuttid/ent"
	"tuttid/sessionread"
	"tuttid/sqlbatch"
)

type turnPageOut struct {
	Session struct {
		TurnConnection struct {
			TotalCount int
			PageInfo   struct {
				HasNextPage, HasPreviousPage bool
				StartCursor                  *string
			}
			Edges []struct {
				Node struct {
					ID, Status string
					Messages   []struct{ Role, Text string }
				}
			}
		}
	}
}

const turnPageE2E = `query($ws: ID!, $id: ID!, $last: Int, $before: Cursor) {
  session(workspaceId: $ws, id: $id) { turnConnection(last: $last, before: $before) {
    totalCount pageInfo { hasNextPage hasPreviousPage startCursor }
    edges { node { id status messages { role text } } } } } }`

// TestTurnPagesOverHTTP reads a real conversation's turns in pages, newest
// page first as the GUI does, and back to the first turn.
func TestTurnPagesOverHTTP(t *testing.T) {
	h := startServer(t, harnessOpts{})
	ws := h.createWorkspace("demo")
	s := h.startSession(ws, "paged")
	var sent []string
	for i := 1; i <= 3; i++ {
		sent = append(sent, h.send(ws, s.ID, fmt.Sprintf("question %d", i)))
	}

	var latest turnPageOut
	h.must(turnPageE2E, map[string]any{"ws": ws, "id": s.ID, "last": 2}, &latest)
	c := latest.Session.TurnConnection
	if c.TotalCount != 3 || len(c.Edges) != 2 || !c.PageInfo.HasPreviousPage || c.PageInfo.HasNextPage ||
		c.Edges[0].Node.ID != sent[1] || c.Edges[1].Node.ID != sent[2] {
		t.Fatalf("latest page: %+v", c)
	}
	for i, e := range c.Edges {
		if e.Node.Status != "COMPLETED" || len(e.Node.Messages) < 2 || e.Node.Messages[0].Role != "user" ||
			e.Node.Messages[0].Text != fmt.Sprintf("question %d", i+2) {
			t.Errorf("turn %d: %+v", i+2, e.Node)
		}
	}
	var earlier turnPageOut
	h.must(turnPageE2E, map[string]any{"ws": ws, "id": s.ID, "last": 2, "before": *c.PageInfo.StartCursor}, &earlier)
	c = earlier.Session.TurnConnection
	if len(c.Edges) != 1 || c.PageInfo.HasPreviousPage || !c.PageInfo.HasNextPage || c.Edges[0].Node.ID != sent[0] ||
		c.Edges[0].Node.Messages[0].Text != "question 1" {
		t.Fatalf("earlier page: %+v", c)
	}
}

// TestTurnBoundsOverHTTP: an unpaged list too long for its bound answers
// result_too_large, and unpaged lists are costed by the complexity limit.
func TestTurnBoundsOverHTTP(t *testing.T) {
	h := startServer(t, harnessOpts{runtime: agenttest.Idle()})
	ws := h.createWorkspace("demo")
	id := h.seedSession(ws, "codex", "thread-1")
	ctx := t.Context()
	var builders []*ent.TurnCreate
	for i := range sessionread.MaxTurnList + 1 {
		builders = append(builders, h.srv.Store.Client.Turn.Create().SetTurnID(fmt.Sprintf("t%04d", i)).
			SetAgentSessionID(id).SetStatus("COMPLETED"))
	}
	for start := 0; start < len(builders); start += sqlbatch.MaxRows {
		if err := h.srv.Store.Client.Turn.CreateBulk(builders[start:min(start+sqlbatch.MaxRows, len(builders))]...).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	vars := map[string]any{"ws": ws, "id": id}
	errs := h.do(`query($ws: ID!, $id: ID!) { session(workspaceId: $ws, id: $id) { turns { id } } }`, vars, nil)
	if len(errs) != 1 || errs[0].Code() != "result_too_large" || !strings.Contains(errs[0].Message, "turnConnection") {
		t.Errorf("unpaged turns of %d: %+v", sessionread.MaxTurnList+1, errs)
	}
	var out struct {
		Session struct {
			Turns []struct{ ID string }
		}
	}
	h.must(`query($ws: ID!, $id: ID!) { session(workspaceId: $ws, id: $id) { turns(last: 1) { id } } }`, vars, &out)
	if len(out.Session.Turns) != 1 || out.Session.Turns[0].ID != fmt.Sprintf("t%04d", sessionread.MaxTurnList) {
		t.Errorf("turns(last: 1): %+v", out.Session.Turns)
	}
	// Every session's unpaged turns with their messages: a fan-out the
	// complexity limit refuses, where turns used to cost one field.
	errs = h.do(`query($ws: ID!) { workspace(id: $ws) { sessions(first: 100) { edges { node {
	  turns { id messages { id text } } } } } } }`, map[string]any{"ws": ws}, nil)
	if len(errs) == 0 || errs[0].Code() != "COMPLEXITY_LIMIT_EXCEEDED" {
		t.Errorf("sessions' turns with messages: %+v", errs)
	}
}
