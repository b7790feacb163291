package server_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"tuttid/agent/agenttest"
)

// seedMessages stores n messages in a session, one turn each two.
func (h *harness) seedMessages(sessionID string, n int) {
	h.t.Helper()
	ctx := h.t.Context()
	a, err := h.srv.Store.Client.AgentSession.Get(ctx, sessionID)
	if err != nil {
		h.t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		v, err := h.srv.Store.Client.AgentSession.UpdateOne(a).AddLastMessageVersion(1).Save(ctx)
		if err != nil {
			h.t.Fatal(err)
		}
		err = h.srv.Store.Client.Message.Create().SetMessageID(fmt.Sprintf("m%02d", i)).
			SetAgentSessionID(a.ID).SetWorkspaceID(a.WorkspaceID).SetTurnID(fmt.Sprintf("t%d", i/2)).
			SetRole("user").SetText(fmt.Sprintf("text %d", i)).SetVersion(v.LastMessageVersion).Exec(ctx)
		if err != nil {
			h.t.Fatal(err)
		}
	}
}

type messagePage struct {
	Session struct {
		Messages struct {
			Edges []struct {
				Cursor string
				Node   struct {
					ID      string
					Version int64
				}
			}
			PageInfo struct {
				HasNextPage, HasPreviousPage bool
				StartCursor, EndCursor       *string
			}
			TotalCount int
		}
	}
}

const messagesQuery = `query($ws: ID!, $id: ID!, $first: Int, $after: Cursor, $last: Int, $before: Cursor) {
  session(workspaceId: $ws, id: $id) { messages(first: $first, after: $after, last: $last, before: $before) {
    edges { cursor node { id version } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } totalCount } } }`

// TestMessagePaginationOverHTTP pages a session's messages forwards and
// backwards through the GraphQL endpoint.
func TestMessagePaginationOverHTTP(t *testing.T) {
	h := startServer(t, harnessOpts{runtime: agenttest.Idle()})
	ws := h.createWorkspace("demo")
	id := h.seedSession(ws, "codex", "thread-1")
	h.seedMessages(id, 7)

	var forward []string
	vars := map[string]any{"ws": ws, "id": id, "first": 3}
	for page := 0; ; page++ {
		var out messagePage
		h.must(messagesQuery, vars, &out)
		m := out.Session.Messages
		if m.TotalCount != 7 {
			t.Fatalf("totalCount = %d", m.TotalCount)
		}
		for _, e := range m.Edges {
			forward = append(forward, e.Node.ID)
		}
		if page > 0 && !m.PageInfo.HasPreviousPage {
			t.Errorf("page %d: hasPreviousPage false after a cursor", page)
		}
		if !m.PageInfo.HasNextPage {
			break
		}
		vars["after"] = *m.PageInfo.EndCursor
	}
	if got := strings.Join(forward, ","); got != "m00,m01,m02,m03,m04,m05,m06" {
		t.Errorf("forward = %s", got)
	}

	var backward []string
	vars = map[string]any{"ws": ws, "id": id, "last": 3}
	for {
		var out messagePage
		h.must(messagesQuery, vars, &out)
		m := out.Session.Messages
		var ids []string
		for _, e := range m.Edges {
			ids = append(ids, e.Node.ID)
		}
		backward = append(ids, backward...)
		if !m.PageInfo.HasPreviousPage {
			break
		}
		vars["before"] = *m.PageInfo.StartCursor
	}
	if got := strings.Join(backward, ","); got != "m00,m01,m02,m03,m04,m05,m06" {
		t.Errorf("backward = %s", got)
	}

	errs := h.do(messagesQuery, map[string]any{"ws": ws, "id": id, "first": 1, "after": "garbage"}, nil)
	if len(errs) != 1 || errs[0].Code() != "invalid_input" {
		t.Errorf("bad cursor: %+v", errs)
	}
	errs = h.do(messagesQuery, map[string]any{"ws": ws, "id": id, "first": 1, "last": 1}, nil)
	if len(errs) != 1 || errs[0].Code() != "invalid_input" {
		t.Errorf("first and last: %+v", errs)
	}
}

// TestReadOperations covers the contract's other reads and the edge
// validation of createWorkspace.
func TestReadOperations(t *testing.T) {
	h := startServer(t, harnessOpts{runtime: agenttest.Idle()})
	ws := h.createWorkspace("one")
	h.createWorkspace("two")
	a := h.seedSession(ws, "codex", "thread-a")
	hidden := h.seedSession(ws, "codex", "thread-b")
	if err := h.srv.Store.Client.AgentSession.UpdateOneID(hidden).SetVisible(false).Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
	var out struct {
		Workspaces []struct{ Name string }
		Workspace  struct {
			Sessions struct {
				TotalCount int
				Edges      []struct{ Node struct{ ID string } }
			}
			All struct{ TotalCount int }
		}
		Missing *struct{ ID string }
		Session struct {
			DisplayTitle string
			Settings     struct {
				PlanMode bool
				Model    *string
			}
			RuntimeContext map[string]any
			Children       []struct{ ID string }
			Parent         *struct{ ID string }
		}
	}
	h.must(`query($ws: ID!, $a: ID!) {
	  workspaces { name }
	  workspace(id: $ws) { sessions(first: 10) { totalCount edges { node { id } } } all: sessions(includeHidden: true) { totalCount } }
	  missing: session(workspaceId: $ws, id: "nope") { id }
	  session(workspaceId: $ws, id: $a) { displayTitle settings { planMode model } runtimeContext children { id } parent { id } }
	}`, map[string]any{"ws": ws, "a": a}, &out)
	if len(out.Workspaces) != 2 || out.Workspaces[0].Name != "one" {
		t.Errorf("workspaces = %+v", out.Workspaces)
	}
	if out.Workspace.Sessions.TotalCount != 1 || out.Workspace.Sessions.Edges[0].Node.ID != a || out.Workspace.All.TotalCount != 2 {
		t.Errorf("sessions = %+v", out.Workspace)
	}
	if out.Missing != nil || out.Session.DisplayTitle != "seeded" || out.Session.Settings.Model != nil ||
		out.Session.RuntimeContext == nil || len(out.Session.Children) != 0 || out.Session.Parent != nil {
		t.Errorf("session = %+v", out)
	}

	for _, bad := range []map[string]any{
		{"name": "", "rootPath": "/tmp"},
		{"name": "x", "rootPath": "relative/path"},
		{"name": strings.Repeat("n", 201), "rootPath": "/tmp"},
	} {
		errs := h.do(`mutation($in: CreateWorkspaceInput!) { createWorkspace(input: $in) { id } }`, map[string]any{"in": bad}, nil)
		if len(errs) != 1 || errs[0].Code() != "invalid_input" {
			t.Errorf("createWorkspace(%v): %+v", bad, errs)
		}
	}
	errs := h.do(`mutation($in: SendMessageInput!) { sendMessage(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": "nope", "text": "hi"}}, nil)
	if len(errs) != 1 || errs[0].Code() != "agent.session_not_found" {
		t.Errorf("send to a missing session: %+v", errs)
	}
}

// TestGraphiQLAndHealth: the playground page and the health check answer.
func TestGraphiQLAndHealth(t *testing.T) {
	h := startServer(t, harnessOpts{runtime: agenttest.Idle()})
	for path, want := range map[string]string{"/": "text/html", "/healthz": "application/json"} {
		resp, err := http.Get(h.url + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), want) {
			t.Errorf("GET %s: %d %s %.80s", path, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
	}
	// A query deep enough to exceed the complexity limit is refused.
	errs := h.do(`{ workspaces { sessions(first: 500) { edges { node { messages(first: 500) { edges { node { id text role } } } } } } } }`, nil, nil)
	if len(errs) == 0 || errs[0].Code() != "COMPLEXITY_LIMIT_EXCEEDED" {
		t.Errorf("complex query: %+v", errs)
	}
}
