package graph_test

import (
	"fmt"
	"testing"

	"github.com/99designs/gqlgen/client"

	"tuttid/store/storetest"
)

// guiSessionsQuery is a list like the GUI's with every per-row field a
// list may ask: a workspace's sessions with their parent, children and
// last message (and the title each is shown with). It runs under the
// server's complexity limit; with each last message's text it would not
// (a page of messages costs its bytes' bound, 8 MiB).
const guiSessionsQuery = `query($id: ID!) { workspace(id: $id) { id
  sessions(first: 200) { totalCount edges { node {
    id displayTitle status
    parent { id }
    children { id }
    messages(last: 1) { totalCount edges { node { id } } }
  } } } } }`

type guiSessions struct {
	Workspace struct {
		ID       string
		Sessions struct {
			TotalCount int
			Edges      []struct {
				Node struct {
					ID, DisplayTitle, Status string
					Parent                   *struct{ ID string }
					Children                 []struct{ ID string }
					Messages                 struct {
						TotalCount int
						Edges      []struct{ Node struct{ ID string } }
					}
				}
			}
		}
	}
}

// seedTrees stores n roots, each with two forks; every other session is
// untitled (shown by its first message) and every session has two turns.
func (e *env) seedTrees(n int) {
	e.t.Helper()
	e.workspace("ws")
	var sessions []storetest.Session
	var forks []storetest.Fork
	for r := range n {
		root := fmt.Sprintf("r%03d", r)
		title := ""
		if r%2 == 0 {
			title = "Root " + root
		}
		sessions = append(sessions, sessionSpec("ws", root, title, len(sessions), 2))
		for k := 1; k <= 2; k++ {
			child := fmt.Sprintf("%s-c%d", root, k)
			forks = append(forks, storetest.Fork{Workspace: "ws", Parent: root, Child: child, TurnID: root + "-t1", At: int64(len(sessions))})
			sessions = append(sessions, sessionSpec("ws", child, "", len(sessions), 1))
		}
	}
	e.db.Sessions(sessions...)
	e.db.Forks(forks...)
}

// TestGUISessionsQueryCount is the N+1 check: the GUI's list costs the same
// number of SQL queries for 3 roots as for 30.
func TestGUISessionsQueryCount(t *testing.T) {
	t.Parallel()
	counts := map[int]int64{}
	for _, n := range []int{3, 30} {
		e := newEnv(t, nil)
		e.seedTrees(n)
		var out guiSessions
		counts[n] = e.queries.Count(func() { e.post(guiSessionsQuery, &out, client.Var("id", "ws")) })
		if got := out.Workspace.Sessions.TotalCount; got != 3*n || len(out.Workspace.Sessions.Edges) != 3*n {
			t.Fatalf("n=%d: %d sessions (%d edges), want %d", n, got, len(out.Workspace.Sessions.Edges), 3*n)
		}
		// The answer is right, not only cheap.
		for _, edge := range out.Workspace.Sessions.Edges {
			s := edge.Node
			if len(s.ID) == 4 { // a root
				if s.Parent != nil || len(s.Children) != 2 || s.Children[0].ID != s.ID+"-c1" || s.Children[1].ID != s.ID+"-c2" {
					t.Errorf("root %s: parent %v, children %v", s.ID, s.Parent, s.Children)
				}
				if s.Messages.TotalCount != 4 || len(s.Messages.Edges) != 1 || s.Messages.Edges[0].Node.ID != s.ID+"-t2-a" {
					t.Errorf("root %s: messages %+v", s.ID, s.Messages)
				}
				wantTitle := "Root " + s.ID
				if s.ID[3]%2 == 1 {
					wantTitle = s.ID + " q1"
				}
				if s.DisplayTitle != wantTitle {
					t.Errorf("root %s: displayTitle %q, want %q", s.ID, s.DisplayTitle, wantTitle)
				}
				continue
			}
			if s.Parent == nil || s.Parent.ID != s.ID[:4] || len(s.Children) != 0 {
				t.Errorf("fork %s: parent %v, children %v", s.ID, s.Parent, s.Children)
			}
			if s.Messages.TotalCount != 2 || len(s.Messages.Edges) != 1 || s.Messages.Edges[0].Node.ID != s.ID+"-t1-a" {
				t.Errorf("fork %s: messages %+v", s.ID, s.Messages)
			}
			if s.DisplayTitle != s.ID+" q1" {
				t.Errorf("fork %s: displayTitle %q", s.ID, s.DisplayTitle)
			}
		}
	}
	if counts[3] != counts[30] {
		t.Errorf("queries for 9 sessions: %d, for 90: %d; want the same", counts[3], counts[30])
	}
	// workspace, count+page of sessions, parents (2), children (2), titles,
	// message counts and pages.
	if counts[30] > 10 {
		t.Errorf("%d queries, want at most 10", counts[30])
	}
	t.Logf("queries: %v", counts)
}

func TestAgentSessionFields(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.workspace("ws")
	e.session("ws", "root", "Root", 0, 2)
	e.session("ws", "kid", "", 1, 0)
	e.fork("ws", "root", "kid", "root-t1", 5)
	e.session("ws", "grandkid", "", 2, 0)
	e.fork("ws", "kid", "grandkid", "", 6)

	var out struct{ Session sessionOut }
	e.post(`query { session(workspaceId: "ws", id: "grandkid") {
	  id workspaceId title displayTitle provider providerSessionId status cwd visible
	  settings { model reasoningEffort permissionModeId planMode browserUse computerUse }
	  runtimeContext parent { id } forkedFrom { sourceAgentSessionId lastTurnId }
	  children { id } ancestors { id } forkTree { session { id } parentId depth }
	  turns { id } } }`, &out)
	s := out.Session
	if s.ID != "grandkid" || s.WorkspaceID != "ws" || s.Title != "" || s.DisplayTitle != "Untitled session" ||
		s.Provider != "codex" || s.ProviderSessionID != "thread-grandkid" || s.Status != "READY" || !s.Visible || s.Cwd != "/work/ws" {
		t.Errorf("scalars: %+v", s)
	}
	if st := s.Settings; st.Model == nil || *st.Model != "gpt-5" || st.ReasoningEffort != nil ||
		st.PermissionModeID == nil || *st.PermissionModeID != "workspace-write" || !st.BrowserUse || st.PlanMode || st.ComputerUse {
		t.Errorf("settings: %+v", st)
	}
	if s.RuntimeContext["k"] != "v" {
		t.Errorf("runtimeContext: %v", s.RuntimeContext)
	}
	if s.Parent == nil || s.Parent.ID != "kid" || s.ForkedFrom == nil || s.ForkedFrom.SourceAgentSessionID != "kid" || s.ForkedFrom.LastTurnID != "" {
		t.Errorf("parent %v, forkedFrom %v", s.Parent, s.ForkedFrom)
	}
	if len(s.Children) != 0 || len(s.Ancestors) != 2 || s.Ancestors[0].ID != "root" || s.Ancestors[1].ID != "kid" {
		t.Errorf("children %v, ancestors %v", s.Children, s.Ancestors)
	}
	if len(s.ForkTree) != 3 || s.ForkTree[0].Session.ID != "root" || s.ForkTree[0].ParentID != nil ||
		s.ForkTree[2].Session.ID != "grandkid" || *s.ForkTree[2].ParentID != "kid" || s.ForkTree[2].Depth != 2 {
		t.Errorf("forkTree %+v", s.ForkTree)
	}
	if len(s.Turns) != 0 {
		t.Errorf("turns %v", s.Turns)
	}

	// The root's conversation: each turn's messages, in one query for all.
	out = struct{ Session sessionOut }{}
	q := e.queries.Count(func() {
		e.post(`query { session(workspaceId: "ws", id: "root") { displayTitle forkedFrom { lastTurnId }
		  turns { id agentSessionId status messages { id turnId role kind text status version content } } } }`, &out)
	})
	s = out.Session
	if s.DisplayTitle != "Root" || s.ForkedFrom != nil || len(s.Turns) != 2 {
		t.Fatalf("root: %+v", s)
	}
	for i, tr := range s.Turns {
		want := fmt.Sprintf("root-t%d", i+1)
		if tr.ID != want || tr.AgentSessionID != "root" || tr.Status != "COMPLETED" || len(tr.Messages) != 2 {
			t.Fatalf("turn %d: %+v", i, tr)
		}
		u, a := tr.Messages[0], tr.Messages[1]
		if u.ID != want+"-u" || u.TurnID != want || u.Role != "user" || u.Kind != "userMessage" || u.Text != fmt.Sprintf("root q%d", i+1) ||
			u.Status != "completed" || u.Version != 2*i+1 || u.Content["type"] != "userMessage" {
			t.Errorf("user message: %+v", u)
		}
		if a.ID != want+"-a" || a.Role != "assistant" || a.Version != 2*i+2 || len(a.Content) != 0 {
			t.Errorf("assistant message: %+v", a)
		}
	}
	// session, forkedFrom, turns, their messages' size (the list's byte
	// bound), and the messages of all turns.
	if q != 5 {
		t.Errorf("%d queries for the conversation, want 5", q)
	}
}

// TestMessagesConnection pages a session's messages both ways, with and
// without the read-ahead of a list.
func TestMessagesConnection(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.workspace("ws")
	e.session("ws", "s", "S", 0, 3)
	type conn struct {
		TotalCount int
		PageInfo   struct {
			HasNextPage, HasPreviousPage bool
			StartCursor, EndCursor       *string
		}
		Edges []struct {
			Cursor string
			Node   struct{ Text string }
		}
	}
	texts := func(c conn) (out []string) {
		for _, e := range c.Edges {
			out = append(out, e.Node.Text)
		}
		return out
	}
	var first struct{ Session struct{ Messages conn } }
	e.post(`query { session(workspaceId: "ws", id: "s") { messages(first: 2) {
	  totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor } edges { cursor node { text } } } } }`, &first)
	m := first.Session.Messages
	if m.TotalCount != 6 || fmt.Sprint(texts(m)) != "[s q1 s a1]" || !m.PageInfo.HasNextPage || m.PageInfo.HasPreviousPage ||
		*m.PageInfo.EndCursor != m.Edges[1].Cursor {
		t.Fatalf("first page: %+v", m)
	}
	var next struct{ Session struct{ Messages conn } }
	e.post(`query($after: Cursor) { session(workspaceId: "ws", id: "s") { messages(first: 10, after: $after) {
	  totalCount pageInfo { hasNextPage hasPreviousPage } edges { cursor node { text } } } } }`, &next, client.Var("after", m.Edges[1].Cursor))
	if n := next.Session.Messages; fmt.Sprint(texts(n)) != "[s q2 s a2 s q3 s a3]" || n.PageInfo.HasNextPage || !n.PageInfo.HasPreviousPage {
		t.Fatalf("next page: %+v", n)
	}
	// The same pages through a list (read ahead for every session).
	var list struct {
		Workspace struct {
			Sessions struct {
				Edges []struct{ Node struct{ A, B conn } }
			}
		}
	}
	e.post(`query { workspace(id: "ws") { sessions(first: 3) { edges { node {
	  a: messages(first: 2) { totalCount pageInfo { hasNextPage hasPreviousPage } edges { node { text } } }
	  b: messages(last: 2) { totalCount pageInfo { hasNextPage hasPreviousPage } edges { node { text } } } } } } } }`, &list)
	n := list.Workspace.Sessions.Edges[0].Node
	if fmt.Sprint(texts(n.A)) != "[s q1 s a1]" || !n.A.PageInfo.HasNextPage || n.A.PageInfo.HasPreviousPage || n.A.TotalCount != 6 {
		t.Errorf("first 2 through a list: %+v", n.A)
	}
	if fmt.Sprint(texts(n.B)) != "[s q3 s a3]" || n.B.PageInfo.HasNextPage || !n.B.PageInfo.HasPreviousPage || n.B.TotalCount != 6 {
		t.Errorf("last 2 through a list: %+v", n.B)
	}
	if code := e.postErr(`query { session(workspaceId: "ws", id: "s") { messages(first: 501) { totalCount } } }`); code != "invalid_input" {
		t.Errorf("first: 501 answered %s, want invalid_input", code)
	}
}

// sessionOut is an AgentSession as the tests read it.
type sessionOut struct {
	ID, WorkspaceID, Title, DisplayTitle, Provider, ProviderSessionID, Status, Cwd string
	Visible                                                                        bool
	Settings                                                                       struct {
		Model, ReasoningEffort, PermissionModeID *string
		PlanMode, BrowserUse, ComputerUse        bool
	}
	RuntimeContext map[string]any
	Parent         *struct{ ID string }
	ForkedFrom     *struct{ SourceAgentSessionID, LastTurnID string }
	Children       []struct{ ID string }
	Ancestors      []struct{ ID string }
	ForkTree       []struct {
		Session  struct{ ID string }
		ParentID *string
		Depth    int
	}
	Turns []struct {
		ID, AgentSessionID, Status string
		Messages                   []struct {
			ID, TurnID, Role, Kind, Text, Status string
			Version                              int
			Content                              map[string]any
		}
	}
}
