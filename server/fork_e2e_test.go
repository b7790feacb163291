package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"tuttid/session"
)

const forkMutation = `mutation($in: ForkSessionInput!) { forkSession(input: $in) {
  session { ` + sessionFields + ` }
  fork { sourceAgentSessionId targetAgentSessionId sourceProviderSessionId targetProviderSessionId provider lastTurnId forkedAtUnixMs }
} }`

type forkView struct {
	SourceAgentSessionID    string
	TargetAgentSessionID    string
	SourceProviderSessionID string
	TargetProviderSessionID string
	Provider                string
	LastTurnID              *string
	ForkedAtUnixMs          int64
}

func (h *harness) fork(in map[string]any) (sessionView, forkView, []gqlError) {
	h.t.Helper()
	var out struct {
		ForkSession struct {
			Session sessionView
			Fork    forkView
		}
	}
	errs := h.do(forkMutation, map[string]any{"in": in}, &out)
	return out.ForkSession.Session, out.ForkSession.Fork, errs
}

func userTexts(s sessionView) []string {
	var out []string
	for _, t := range s.Turns {
		for _, m := range t.Messages {
			if m.Role == "user" {
				out = append(out, m.Text)
			}
		}
	}
	return out
}

// TestForkFromTurnCarriesOnlyThatHistory is the guarantee a message copy
// cannot give: after a fork through turn 1 of 2, the child's next turn
// sends turn 1's text and not turn 2's, while the parent keeps both.
func TestForkFromTurnCarriesOnlyThatHistory(t *testing.T) {
	h := startServer(t, harnessOpts{})
	ws := h.createWorkspace("demo")
	parent := h.startSession(ws, "Build login")
	turn1 := h.send(ws, parent.ID, "turn one")
	h.send(ws, parent.ID, "turn two")
	before := h.session(ws, parent.ID)
	rowsBefore := h.dumpRows(parent.ID)
	if n := strings.Count(rowsBefore, "\n"); n < 5 { // the session, 2 turns, 2+ messages
		t.Fatalf("parent dump has %d rows: %s", n, rowsBefore)
	}

	child, lin, errs := h.fork(map[string]any{
		"workspaceId": ws, "agentSessionId": parent.ID, "requestId": session.NewID(), "lastTurnId": turn1,
	})
	if len(errs) > 0 {
		t.Fatalf("fork: %+v", errs)
	}
	if child.Title != "Build login(fork1)" {
		t.Errorf("child title = %q", child.Title)
	}
	if child.ProviderSessionID == "" || child.ProviderSessionID == parent.ProviderSessionID {
		t.Errorf("child thread = %q, parent thread = %q", child.ProviderSessionID, parent.ProviderSessionID)
	}
	if lin.SourceAgentSessionID != parent.ID || lin.TargetAgentSessionID != child.ID ||
		lin.SourceProviderSessionID != parent.ProviderSessionID || lin.TargetProviderSessionID != child.ProviderSessionID ||
		lin.Provider != "codex" || lin.LastTurnID == nil || *lin.LastTurnID != turn1 || lin.ForkedAtUnixMs == 0 {
		t.Errorf("lineage = %+v", lin)
	}
	if got := userTexts(child); !slices.Equal(got, []string{"turn one"}) {
		t.Errorf("child history user texts = %q", got)
	}
	if src := child.RuntimeContext["forkMessageSource"]; src != "provider-turns" {
		t.Errorf("forkMessageSource = %v", src)
	}
	if rowsAfter := h.dumpRows(parent.ID); rowsAfter != rowsBefore {
		t.Errorf("the fork changed the parent's stored rows:\nbefore %s\nafter  %s", rowsBefore, rowsAfter)
	}

	h.send(ws, child.ID, "child turn")
	reqs := h.model.RequestsFor(child.ProviderSessionID)
	if len(reqs) != 1 {
		t.Fatalf("model saw %d requests for the child thread", len(reqs))
	}
	if got := reqs[0].UserTexts(); !slices.Equal(got, []string{"turn one", "child turn"}) {
		t.Errorf("child turn sent user texts %q; want turn one's history only", got)
	}

	h.send(ws, parent.ID, "parent turn three")
	preqs := h.model.RequestsFor(parent.ProviderSessionID)
	if got := preqs[len(preqs)-1].UserTexts(); !slices.Equal(got, []string{"turn one", "turn two", "parent turn three"}) {
		t.Errorf("parent turn sent user texts %q", got)
	}

	// The parent was untouched by the fork (its later turn changed it, so
	// compare with the snapshot from before the fork for the fork-time view).
	after := h.session(ws, parent.ID)
	if !slices.Equal(userTexts(after)[:2], userTexts(before)) || after.Title != before.Title {
		t.Errorf("parent changed: before %+v after %+v", before, after)
	}
}

// TestForkWholeConversationAndLineage forks a whole session twice and a
// fork of a fork, then reads the lineage from either end.
func TestForkWholeConversationAndLineage(t *testing.T) {
	h := startServer(t, harnessOpts{})
	ws := h.createWorkspace("demo")
	root := h.startSession(ws, "Build login")
	h.send(ws, root.ID, "hello")

	a, _, errs := h.fork(map[string]any{"workspaceId": ws, "agentSessionId": root.ID, "requestId": "req-a"})
	if len(errs) > 0 {
		t.Fatalf("fork a: %+v", errs)
	}
	b, _, errs := h.fork(map[string]any{"workspaceId": ws, "agentSessionId": root.ID, "requestId": "req-b"})
	if len(errs) > 0 {
		t.Fatalf("fork b: %+v", errs)
	}
	c, _, errs := h.fork(map[string]any{"workspaceId": ws, "agentSessionId": a.ID, "requestId": "req-c"})
	if len(errs) > 0 {
		t.Fatalf("fork c: %+v", errs)
	}
	for got, want := range map[string]string{a.Title: "Build login(fork1)", b.Title: "Build login(fork2)", c.Title: "Build login(fork1)(fork1)"} {
		if got != want {
			t.Errorf("title %q, want %q", got, want)
		}
	}
	if got := userTexts(c); !slices.Equal(got, []string{"hello"}) {
		t.Errorf("grandchild history = %q", got)
	}

	var out struct {
		Session struct {
			Parent     *struct{ ID string }
			ForkedFrom *struct{ SourceAgentSessionID string }
			Ancestors  []struct{ ID string }
		}
		Root struct {
			Children []struct{ ID string }
		}
		ForkTree []struct {
			Session  struct{ ID string }
			ParentID *string
			Depth    int
		}
	}
	h.must(`query($ws: ID!, $c: ID!, $r: ID!) {
	  session(workspaceId: $ws, id: $c) { parent { id } forkedFrom { sourceAgentSessionId } ancestors { id } }
	  root: session(workspaceId: $ws, id: $r) { children { id } }
	  forkTree(workspaceId: $ws, agentSessionId: $c) { session { id } parentId depth }
	}`, map[string]any{"ws": ws, "c": c.ID, "r": root.ID}, &out)
	if out.Session.Parent == nil || out.Session.Parent.ID != a.ID || out.Session.ForkedFrom.SourceAgentSessionID != a.ID {
		t.Errorf("grandchild parent = %+v", out.Session)
	}
	if ids := ids(out.Session.Ancestors); !slices.Equal(ids, []string{root.ID, a.ID}) {
		t.Errorf("ancestors = %v", ids)
	}
	if ids := ids(out.Root.Children); !slices.Equal(ids, []string{a.ID, b.ID}) {
		t.Errorf("children = %v", ids)
	}
	var tree []string
	for _, n := range out.ForkTree {
		tree = append(tree, n.Session.ID)
	}
	if !slices.Equal(tree, []string{root.ID, a.ID, c.ID, b.ID}) || out.ForkTree[0].Depth != 0 || out.ForkTree[2].Depth != 2 ||
		out.ForkTree[0].ParentID != nil || *out.ForkTree[2].ParentID != a.ID {
		t.Errorf("fork tree = %+v", out.ForkTree)
	}
}

func ids(list []struct{ ID string }) []string {
	var out []string
	for _, x := range list {
		out = append(out, x.ID)
	}
	return out
}

// TestRESTForkOnRealCodex forks through the REST endpoint: 201 then a 200
// replay with the same child, and the spec's statuses for failures.
func TestRESTForkOnRealCodex(t *testing.T) {
	h := startServer(t, harnessOpts{})
	ws := h.createWorkspace("demo")
	parent := h.startSession(ws, "Build login")
	turn1 := h.send(ws, parent.ID, "only turn")

	path := "/v1/workspaces/" + ws + "/agent-sessions/" + parent.ID + "/fork"
	body := map[string]any{"requestId": "rest-1", "lastTurnId": turn1, "settings": map[string]any{"reasoningEffort": "high"}}
	status, first := h.post(path, body)
	if status != http.StatusCreated {
		t.Fatalf("fork status %d: %s", status, first)
	}
	var res struct {
		Session struct {
			ID, Title, ProviderSessionID string
			Settings                     struct{ ReasoningEffort string }
			RuntimeContext               map[string]any
		}
		Fork struct {
			SourceAgentSessionID, TargetAgentSessionID, LastTurnID, Provider string
			ForkedAtUnixMs                                                   int64
		}
	}
	if err := json.Unmarshal(first, &res); err != nil {
		t.Fatal(err)
	}
	if res.Session.Title != "Build login(fork1)" || res.Session.Settings.ReasoningEffort != "high" ||
		res.Fork.SourceAgentSessionID != parent.ID || res.Fork.TargetAgentSessionID != res.Session.ID ||
		res.Fork.LastTurnID != turn1 || res.Fork.Provider != "codex" ||
		res.Session.RuntimeContext["forkedFromAgentSessionId"] != parent.ID {
		t.Errorf("response = %s", first)
	}
	status, again := h.post(path, body)
	if status != http.StatusOK || !bytes.Contains(again, []byte(res.Session.ID)) {
		t.Errorf("replay status %d: %s", status, again)
	}

	cases := []struct {
		name   string
		path   string
		body   any
		status int
		code   string
	}{
		{"request conflict", path, map[string]any{"requestId": "rest-1"}, 409, "agent.fork_request_conflict"},
		{"target conflict", path, map[string]any{"requestId": "rest-2", "targetAgentSessionId": parent.ID + "x", "title": "t"}, 0, ""},
		{"bad turn", path, map[string]any{"requestId": "rest-3", "lastTurnId": "nope"}, 400, "agent.fork_turn_not_found"},
		{"missing parent", "/v1/workspaces/" + ws + "/agent-sessions/nope/fork", map[string]any{"requestId": "rest-4"}, 404, "agent.fork_parent_not_found"},
		{"no request id", path, map[string]any{}, 400, "invalid_input"},
		{"unknown field", path, map[string]any{"requestId": "rest-5", "bogus": 1}, 400, "invalid_input"},
		{"not json", path, "{", 400, "invalid_input"},
		{"bad settings", path, map[string]any{"requestId": "rest-6", "settings": map[string]any{"permissionModeId": "root"}}, 400, "invalid_input"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, raw := h.post(tc.path, tc.body)
			if tc.status == 0 {
				return // setup step
			}
			var e struct {
				Error struct{ Code, Message string }
			}
			_ = json.Unmarshal(raw, &e)
			if status != tc.status || e.Error.Code != tc.code || e.Error.Message == "" {
				t.Errorf("status %d body %s; want %d %s", status, raw, tc.status, tc.code)
			}
		})
	}
	// The target conflict: the id now exists.
	status, raw := h.post(path, map[string]any{"requestId": "rest-7", "targetAgentSessionId": parent.ID + "x"})
	if status != http.StatusConflict || !bytes.Contains(raw, []byte("agent.fork_target_conflict")) {
		t.Errorf("target conflict: %d %s", status, raw)
	}
}

func (h *harness) post(path string, body any) (int, []byte) {
	h.t.Helper()
	var r io.Reader
	if s, ok := body.(string); ok {
		r = bytes.NewBufferString(s)
	} else {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	resp, err := http.Post(h.url+path, "application/json", r)
	if err != nil {
		h.t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

// TestForkSessionWithoutTurns: a session that never ran a turn has nothing
// stored at Codex to fork; its fork is a new thread with the same settings,
// recorded with its lineage, and the child works.
func TestForkSessionWithoutTurns(t *testing.T) {
	h := startServer(t, harnessOpts{})
	ws := h.createWorkspace("demo")
	parent := h.startSession(ws, "Fresh")
	child, lin, errs := h.fork(map[string]any{"workspaceId": ws, "agentSessionId": parent.ID, "requestId": "fresh-1"})
	if len(errs) > 0 {
		t.Fatalf("fork: %+v", errs)
	}
	if child.Title != "Fresh(fork1)" || child.ProviderSessionID == "" || child.ProviderSessionID == parent.ProviderSessionID ||
		lin.SourceAgentSessionID != parent.ID || child.RuntimeContext["forkMessageSource"] != "empty-parent" {
		t.Errorf("child %+v lineage %+v", child, lin)
	}
	h.send(ws, child.ID, "first words")
	if got := userTexts(h.session(ws, child.ID)); !slices.Equal(got, []string{"first words"}) {
		t.Errorf("child history = %q", got)
	}
}

// dumpRows renders a session's row, turns and messages exactly as stored.
func (h *harness) dumpRows(sessionID string) string {
	h.t.Helper()
	var out strings.Builder
	for _, q := range []string{
		`SELECT * FROM workspace_agent_sessions WHERE agent_session_id = ?`,
		`SELECT * FROM workspace_agent_turns WHERE agent_session_id = ? ORDER BY id`,
		`SELECT * FROM workspace_agent_messages WHERE agent_session_id = ? ORDER BY id`,
	} {
		rows, err := h.srv.Store.DB.QueryContext(h.t.Context(), h.srv.Store.Dialect().Rebind(q), sessionID)
		if err != nil {
			h.t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				h.t.Fatal(err)
			}
			fmt.Fprintf(&out, "%v\n", vals)
		}
		rows.Close()
	}
	return out.String()
}
