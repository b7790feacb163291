package graph_test

import (
	"fmt"
	"testing"

	"github.com/99designs/gqlgen/client"

	"tuttid/agent"
)

func TestWorkspaceQueriesAndMutations(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	root := t.TempDir()
	var created struct {
		CreateWorkspace struct{ ID, Name, RootPath string }
	}
	e.post(`mutation($in: CreateWorkspaceInput!) { createWorkspace(input: $in) { id name rootPath } }`, &created,
		client.Var("in", map[string]any{"name": "  Proj ", "rootPath": root}))
	w := created.CreateWorkspace
	if w.ID == "" || w.Name != "Proj" || w.RootPath != root {
		t.Fatalf("created %+v", w)
	}
	for _, bad := range []map[string]any{{"name": "", "rootPath": root}, {"name": "x", "rootPath": "relative"},
		{"name": "a\x1b[2Jb", "rootPath": root}, {"name": "a\x00b", "rootPath": root}, {"name": "a\u202eb", "rootPath": root}} {
		if code := e.postErr(`mutation($in: CreateWorkspaceInput!) { createWorkspace(input: $in) { id } }`, client.Var("in", bad)); code != "invalid_input" {
			t.Errorf("createWorkspace(%v) answered %s, want invalid_input", bad, code)
		}
	}

	var got struct {
		Workspace  *struct{ ID, Name string }
		Missing    *struct{ ID string }
		Workspaces []struct{ ID string }
	}
	e.post(`query($id: ID!) { workspace(id: $id) { id name } missing: workspace(id: "nope") { id } workspaces { id } }`, &got, client.Var("id", w.ID))
	if got.Workspace == nil || got.Workspace.Name != "Proj" || got.Missing != nil || len(got.Workspaces) != 1 || got.Workspaces[0].ID != w.ID {
		t.Errorf("queries: %+v", got)
	}
}

func TestSessionQueriesAndPaging(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.workspace("ws")
	for i := range 5 {
		e.session("ws", fmt.Sprintf("s%d", i), "", i, 0)
	}
	hidden := sessionSpec("ws", "hidden", "", 9, 0)
	hidden.Hidden = true
	e.db.Session(hidden)
	e.fork("ws", "s0", "s1", "", 1)

	var one struct {
		Session *struct{ ID string }
		None    *struct{ ID string }
		Other   *struct{ ID string }
		Tree    []struct {
			Session  struct{ ID string }
			ParentID *string
			Depth    int
		}
	}
	e.post(`query { session(workspaceId: "ws", id: "s1") { id } none: session(workspaceId: "ws", id: "zz") { id }
	  other: session(workspaceId: "other", id: "s1") { id }
	  tree: forkTree(workspaceId: "ws", agentSessionId: "s1") { session { id } parentId depth } }`, &one)
	if one.Session == nil || one.Session.ID != "s1" || one.None != nil || one.Other != nil {
		t.Errorf("session: %+v", one)
	}
	if len(one.Tree) != 2 || one.Tree[0].Session.ID != "s0" || one.Tree[1].ParentID == nil || *one.Tree[1].ParentID != "s0" || one.Tree[1].Depth != 1 {
		t.Errorf("forkTree: %+v", one.Tree)
	}

	type page struct {
		Workspace struct {
			Sessions struct {
				TotalCount int
				PageInfo   struct {
					HasNextPage bool
					EndCursor   *string
				}
				Edges []struct{ Node struct{ ID string } }
			}
		}
	}
	ids := func(p page) (out []string) {
		for _, e := range p.Workspace.Sessions.Edges {
			out = append(out, e.Node.ID)
		}
		return out
	}
	const q = `query($after: Cursor, $hidden: Boolean) { workspace(id: "ws") { sessions(first: 3, after: $after, includeHidden: $hidden) {
	  totalCount pageInfo { hasNextPage endCursor } edges { node { id } } } } }`
	var p1, p2, all page
	e.post(q, &p1)
	if fmt.Sprint(ids(p1)) != "[s0 s1 s2]" || !p1.Workspace.Sessions.PageInfo.HasNextPage || p1.Workspace.Sessions.TotalCount != 5 {
		t.Errorf("page 1: %+v", p1)
	}
	e.post(q, &p2, client.Var("after", *p1.Workspace.Sessions.PageInfo.EndCursor))
	if fmt.Sprint(ids(p2)) != "[s3 s4]" || p2.Workspace.Sessions.PageInfo.HasNextPage {
		t.Errorf("page 2: %+v", p2)
	}
	e.post(q, &all, client.Var("after", *p1.Workspace.Sessions.PageInfo.EndCursor), client.Var("hidden", true))
	if fmt.Sprint(ids(all)) != "[s3 s4 hidden]" || all.Workspace.Sessions.TotalCount != 6 {
		t.Errorf("with hidden: %+v", all)
	}
	if code := e.postErr(`query { workspace(id: "ws") { sessions(after: "bogus") { totalCount } } }`); code != "invalid_input" {
		t.Errorf("bad cursor answered %s", code)
	}
}

// TestSessionLifecycle runs the mutations on the real codex app-server.
func TestSessionLifecycle(t *testing.T) {
	t.Parallel()
	e := newCodexEnv(t)
	var ws struct{ CreateWorkspace struct{ ID string } }
	e.post(`mutation($in: CreateWorkspaceInput!) { createWorkspace(input: $in) { id } }`, &ws,
		client.Var("in", map[string]any{"name": "w", "rootPath": t.TempDir()}))
	wsID := ws.CreateWorkspace.ID

	var started struct {
		StartSession struct {
			ID, Title, Status, ProviderSessionID string
			Settings                             struct{ PermissionModeID, ReasoningEffort *string }
		}
	}
	e.post(`mutation($in: StartSessionInput!) { startSession(input: $in) { id title status providerSessionId settings { permissionModeId reasoningEffort } } }`,
		&started, client.Var("in", map[string]any{"workspaceId": wsID, "title": "Plan", "settings": map[string]any{"reasoningEffort": "low"}}))
	s := started.StartSession
	if s.ID == "" || s.Title != "Plan" || s.Status != "READY" || s.ProviderSessionID == "" ||
		*s.Settings.PermissionModeID != agent.PermissionWorkspaceWrite || *s.Settings.ReasoningEffort != "low" {
		t.Fatalf("started %+v", s)
	}
	if code := e.postErr(`mutation($in: StartSessionInput!) { startSession(input: $in) { id } }`,
		client.Var("in", map[string]any{"workspaceId": "nope"})); code != "agent.workspace_not_found" {
		t.Errorf("startSession in a missing workspace answered %s", code)
	}

	var sent struct {
		SendMessage struct{ ID, Status, AgentSessionID string }
	}
	e.post(`mutation($in: SendMessageInput!) { sendMessage(input: $in) { id status agentSessionId } }`, &sent,
		client.Var("in", map[string]any{"workspaceId": wsID, "agentSessionId": s.ID, "text": "hello"}))
	if sent.SendMessage.ID == "" || sent.SendMessage.AgentSessionID != s.ID {
		t.Fatalf("sent %+v", sent)
	}
	turnID := sent.SendMessage.ID
	e.eventually("the turn to complete", func() bool {
		var got struct {
			Session struct {
				Status string
				Turns  []struct{ ID, Status string }
			}
		}
		e.post(`query($ws: ID!, $id: ID!) { session(workspaceId: $ws, id: $id) { status turns { id status } } }`, &got,
			client.Var("ws", wsID), client.Var("id", s.ID))
		return got.Session.Status == "READY" && len(got.Session.Turns) == 1 && got.Session.Turns[0].Status == "COMPLETED"
	})
	if code := e.postErr(`mutation($in: InterruptTurnInput!) { interruptTurn(input: $in) { id } }`,
		client.Var("in", map[string]any{"workspaceId": wsID, "agentSessionId": s.ID, "turnId": turnID})); code != "agent.session_not_busy" {
		t.Errorf("interrupting a completed turn answered %s", code)
	}
	if code := e.postErr(`mutation($in: InterruptTurnInput!) { interruptTurn(input: $in) { id } }`,
		client.Var("in", map[string]any{"workspaceId": wsID, "agentSessionId": s.ID, "turnId": "nope"})); code != "agent.turn_not_found" {
		t.Errorf("interrupting a missing turn answered %s", code)
	}

	var forked struct {
		ForkSession struct {
			Session struct {
				ID, Title string
				Parent    struct{ ID string }
				Turns     []struct{ ID string }
			}
			Fork struct {
				SourceAgentSessionID, TargetAgentSessionID, SourceProviderSessionID, TargetProviderSessionID, Provider string
				LastTurnID                                                                                             *string
				ForkedAtUnixMs                                                                                         int64
			}
		}
	}
	e.post(`mutation($in: ForkSessionInput!) { forkSession(input: $in) {
	  session { id title parent { id } turns { id } }
	  fork { sourceAgentSessionId targetAgentSessionId sourceProviderSessionId targetProviderSessionId provider lastTurnId forkedAtUnixMs } } }`,
		&forked, client.Var("in", map[string]any{"workspaceId": wsID, "agentSessionId": s.ID, "requestId": "r1", "lastTurnId": turnID}))
	c, f := forked.ForkSession.Session, forked.ForkSession.Fork
	if c.Title != "Plan(fork1)" || c.Parent.ID != s.ID || len(c.Turns) != 1 || c.Turns[0].ID != turnID {
		t.Errorf("child %+v", c)
	}
	if f.SourceAgentSessionID != s.ID || f.TargetAgentSessionID != c.ID || f.SourceProviderSessionID != s.ProviderSessionID ||
		f.TargetProviderSessionID == "" || f.TargetProviderSessionID == s.ProviderSessionID || f.Provider != "codex" ||
		f.LastTurnID == nil || *f.LastTurnID != turnID || f.ForkedAtUnixMs == 0 {
		t.Errorf("fork %+v", f)
	}

	var deleted struct{ DeleteSession string }
	e.post(`mutation($in: DeleteSessionInput!) { deleteSession(input: $in) }`, &deleted,
		client.Var("in", map[string]any{"workspaceId": wsID, "agentSessionId": c.ID}))
	if deleted.DeleteSession != c.ID {
		t.Errorf("deleted %q, want %q", deleted.DeleteSession, c.ID)
	}
	if code := e.postErr(`mutation($in: DeleteSessionInput!) { deleteSession(input: $in) }`,
		client.Var("in", map[string]any{"workspaceId": wsID, "agentSessionId": c.ID})); code != "agent.session_not_found" {
		t.Errorf("deleting twice answered %s", code)
	}
}
