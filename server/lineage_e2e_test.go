package server_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// End-to-end tests of the lineage tooling (api-contract.md "Lineage
// tooling") on real Codex forks: compareSessions, forkPoints,
// updateSession, deleteSession(subtree) and `tuttid tree`.

// lineageTree is the tree TestLineageTooling builds on the real
// app-server (turn ids are Codex's):
//
//	root   t1 t2
//	├── c  (from t1)       t1 c1
//	│   └── g (from c1)    t1 c1 g1
//	├── d  (from t2)       t1 t2
//	└── w  (whole)         t1 t2
//	u      (another tree)  u1
type lineageTree struct {
	ws                 string
	root, c, g, d, w   string
	u                  string
	t1, t2, c1, g1, u1 string
	threads            map[string]string // session id -> Codex thread id
}

func (h *harness) forkAs(ws, parent, title, lastTurnID string) sessionView {
	h.t.Helper()
	in := map[string]any{"workspaceId": ws, "agentSessionId": parent, "requestId": "req-" + title, "title": title}
	if lastTurnID != "" {
		in["lastTurnId"] = lastTurnID
	}
	s, _, errs := h.fork(in)
	if len(errs) > 0 {
		h.t.Fatalf("fork %s: %+v", title, errs)
	}
	return s
}

func buildLineageTree(t *testing.T, h *harness) lineageTree {
	t.Helper()
	tr := lineageTree{ws: h.createWorkspace("lineage"), threads: map[string]string{}}
	root := h.startSession(tr.ws, "root")
	tr.root = root.ID
	tr.t1 = h.send(tr.ws, tr.root, "root one")
	tr.t2 = h.send(tr.ws, tr.root, "root two")
	tr.c = h.forkAs(tr.ws, tr.root, "c", tr.t1).ID
	tr.c1 = h.send(tr.ws, tr.c, "c one")
	tr.g = h.forkAs(tr.ws, tr.c, "g", tr.c1).ID
	tr.g1 = h.send(tr.ws, tr.g, "g one")
	tr.d = h.forkAs(tr.ws, tr.root, "d", tr.t2).ID
	tr.w = h.forkAs(tr.ws, tr.root, "w", "").ID
	u := h.startSession(tr.ws, "u")
	tr.u = u.ID
	tr.u1 = h.send(tr.ws, tr.u, "u one")
	for _, id := range []string{tr.root, tr.c, tr.g, tr.d, tr.w, tr.u} {
		tr.threads[id] = h.session(tr.ws, id).ProviderSessionID
	}
	return tr
}

type turnView struct {
	ID       string
	Messages []struct{ Role, Text string }
}

type comparisonView struct {
	A, B            struct{ ID string }
	CommonAncestor  *struct{ ID string }
	SharedTurnCount int
	SharedTurns     []turnView
	AOnly, BOnly    []turnView
}

func turnIDsOf(ts []turnView) []string {
	out := []string{}
	for _, t := range ts {
		out = append(out, t.ID)
	}
	return out
}

func (h *harness) compare(ws, a, b string) (comparisonView, []gqlError) {
	h.t.Helper()
	var out struct{ CompareSessions comparisonView }
	errs := h.do(`query($ws: ID!, $a: ID!, $b: ID!) { compareSessions(workspaceId: $ws, a: $a, b: $b) {
	  a { id } b { id } commonAncestor { id } sharedTurnCount
	  sharedTurns { id messages { role text } } aOnly { id messages { role text } } bOnly { id messages { role text } }
	} }`, map[string]any{"ws": ws, "a": a, "b": b}, &out)
	return out.CompareSessions, errs
}

func (h *harness) updateSession(in map[string]any) (struct {
	ID, Title, DisplayTitle string
	Archived                bool
}, []gqlError) {
	h.t.Helper()
	var out struct {
		UpdateSession struct {
			ID, Title, DisplayTitle string
			Archived                bool
		}
	}
	errs := h.do(`mutation($in: UpdateSessionInput!) { updateSession(input: $in) { id title displayTitle archived } }`,
		map[string]any{"in": in}, &out)
	return out.UpdateSession, errs
}

// listed returns the ids of the workspace's sessions with the archived
// argument as given ("default" leaves it out, "null" passes null).
func (h *harness) listed(ws, archived string) []string {
	h.t.Helper()
	arg := ""
	if archived != "default" {
		arg = ", archived: " + archived
	}
	var out struct {
		Workspace struct {
			Sessions struct {
				Edges []struct{ Node struct{ ID string } }
			}
		}
	}
	h.must(`query($ws: ID!) { workspace(id: $ws) { sessions(first: 100`+arg+`) { edges { node { id } } } } }`,
		map[string]any{"ws": ws}, &out)
	var ids []string
	for _, e := range out.Workspace.Sessions.Edges {
		ids = append(ids, e.Node.ID)
	}
	slices.Sort(ids)
	return ids
}

func sorted(ids ...string) []string {
	out := slices.Clone(ids)
	slices.Sort(out)
	return out
}

// tuttidBinary builds the tuttid command once per test binary.
func tuttidBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "tuttid")
	cmd := exec.Command("go", "build", "-o", bin, "tuttid")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build tuttid: %v\n%s", err, out)
	}
	return bin
}

// runTree runs `tuttid tree` with TUTTID_DB (the server's environment
// variable) pointing at db, and returns its output and exit code.
func runTree(t *testing.T, bin, db string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"tree"}, args...)...)
	cmd.Env = append(cmd.Environ(), "TUTTID_DB="+db)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("run tuttid tree: %v", err)
	}
	return o.String(), e.String(), code
}

func TestLineageTooling(t *testing.T) {
	h := startServer(t, harnessOpts{})
	bin := tuttidBinary(t)
	tr := buildLineageTree(t, h)
	ws := tr.ws

	t.Run("compareSessions", func(t *testing.T) {
		for _, tc := range []struct {
			name, a, b, ancestor string
			shared, aOnly, bOnly []string
		}{
			{"across a grandchild", tr.root, tr.g, tr.root, []string{tr.t1}, []string{tr.t2}, []string{tr.c1, tr.g1}},
			{"parent and child", tr.c, tr.g, tr.c, []string{tr.t1, tr.c1}, []string{}, []string{tr.g1}},
			{"cousins", tr.g, tr.d, tr.root, []string{tr.t1}, []string{tr.c1, tr.g1}, []string{tr.t2}},
			{"whole fork", tr.w, tr.root, tr.root, []string{tr.t1, tr.t2}, []string{}, []string{}},
			{"other tree", tr.g, tr.u, "", []string{}, []string{tr.t1, tr.c1, tr.g1}, []string{tr.u1}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				got, errs := h.compare(ws, tc.a, tc.b)
				if len(errs) > 0 {
					t.Fatal(errs)
				}
				anc := ""
				if got.CommonAncestor != nil {
					anc = got.CommonAncestor.ID
				}
				if got.A.ID != tc.a || got.B.ID != tc.b || anc != tc.ancestor {
					t.Errorf("a, b, commonAncestor = %s, %s, %q; want %s, %s, %q", got.A.ID, got.B.ID, anc, tc.a, tc.b, tc.ancestor)
				}
				if got.SharedTurnCount != len(tc.shared) || !slices.Equal(turnIDsOf(got.SharedTurns), tc.shared) {
					t.Errorf("shared %d %v, want %v", got.SharedTurnCount, turnIDsOf(got.SharedTurns), tc.shared)
				}
				if !slices.Equal(turnIDsOf(got.AOnly), tc.aOnly) || !slices.Equal(turnIDsOf(got.BOnly), tc.bOnly) {
					t.Errorf("aOnly %v bOnly %v, want %v %v", turnIDsOf(got.AOnly), turnIDsOf(got.BOnly), tc.aOnly, tc.bOnly)
				}
			})
		}
		// Each side's turns carry their own conversation.
		got, _ := h.compare(ws, tr.root, tr.g)
		var texts []string
		for _, turn := range got.BOnly {
			for _, m := range turn.Messages {
				if m.Role == "user" {
					texts = append(texts, m.Text)
				}
			}
		}
		if !slices.Equal(texts, []string{"c one", "g one"}) {
			t.Errorf("bOnly user texts = %q, want c's and g's", texts)
		}
		for _, tc := range []struct{ ws, a, b, code string }{
			{ws, tr.root, "missing", "agent.session_not_found"},
			{"no-such-workspace", tr.root, tr.g, "agent.workspace_not_found"},
			{ws, "bad id", tr.g, "invalid_input"},
		} {
			if _, errs := h.compare(tc.ws, tc.a, tc.b); len(errs) != 1 || errs[0].Code() != tc.code {
				t.Errorf("compare(%s, %s, %s) errors = %+v, want %s", tc.ws, tc.a, tc.b, errs, tc.code)
			}
		}
	})

	t.Run("forkPoints", func(t *testing.T) {
		var out struct {
			Root, C, G struct {
				ForkPoints []struct {
					TurnID   *string
					Children []struct{ ID string }
				}
			}
		}
		h.must(`query($ws: ID!, $r: ID!, $c: ID!, $g: ID!) {
		  root: session(workspaceId: $ws, id: $r) { forkPoints { turnId children { id } } }
		  c: session(workspaceId: $ws, id: $c) { forkPoints { turnId children { id } } }
		  g: session(workspaceId: $ws, id: $g) { forkPoints { turnId children { id } } }
		}`, map[string]any{"ws": ws, "r": tr.root, "c": tr.c, "g": tr.g}, &out)
		var got []string
		for _, p := range out.Root.ForkPoints {
			got = append(got, fmt.Sprintf("%s:%v", deref(p.TurnID), ids(p.Children)))
		}
		want := []string{tr.t1 + ":[" + tr.c + "]", tr.t2 + ":[" + tr.d + "]", "<nil>:[" + tr.w + "]"}
		if !slices.Equal(got, want) {
			t.Errorf("root forkPoints = %v, want %v", got, want)
		}
		if p := out.C.ForkPoints; len(p) != 1 || deref(p[0].TurnID) != tr.c1 || !slices.Equal(ids(p[0].Children), []string{tr.g}) {
			t.Errorf("c forkPoints = %+v, want %s: [g]", p, tr.c1)
		}
		if out.G.ForkPoints == nil || len(out.G.ForkPoints) != 0 {
			t.Errorf("g forkPoints = %+v, want []", out.G.ForkPoints)
		}
	})

	t.Run("tree", func(t *testing.T) {
		// Beside the running server, through TUTTID_DB.
		text, stderr, code := runTree(t, bin, h.dbPath, "--workspace", ws)
		wantText := fmt.Sprintf("root [READY] %s\n  c [READY] %s\n    g [READY] %s\n  d [READY] %s\n  w [READY] %s\nu [READY] %s\n",
			tr.root, tr.c, tr.g, tr.d, tr.w, tr.u)
		if code != 0 || text != wantText {
			t.Errorf("tree text: exit %d, stderr %q, output\n%s\nwant\n%s", code, stderr, text, wantText)
		}
		text, _, code = runTree(t, bin, h.dbPath, "--workspace", ws, "--session", tr.g, "--format", "text")
		if want := strings.TrimSuffix(wantText, fmt.Sprintf("u [READY] %s\n", tr.u)); code != 0 || text != want {
			t.Errorf("tree --session g: exit %d, output\n%s\nwant\n%s", code, text, want)
		}

		out, stderr, code := runTree(t, bin, h.dbPath, "--workspace", ws, "--format", "json")
		type node struct {
			ID, Title, Status, ProviderSessionID string
			LastTurnID                           *string
			Children                             []node
		}
		var roots []node
		if code != 0 || json.Unmarshal([]byte(out), &roots) != nil {
			t.Fatalf("tree json: exit %d, stderr %q, output %s", code, stderr, out)
		}
		leaf := func(id, title, last string) node {
			n := node{ID: id, Title: title, Status: "READY", ProviderSessionID: tr.threads[id], Children: []node{}}
			if last != "" {
				n.LastTurnID = &last
			}
			return n
		}
		c := leaf(tr.c, "c", tr.t1)
		c.Children = []node{leaf(tr.g, "g", tr.c1)}
		root := leaf(tr.root, "root", "")
		root.Children = []node{c, leaf(tr.d, "d", tr.t2), leaf(tr.w, "w", "")}
		want, _ := json.Marshal([]node{root, leaf(tr.u, "u", "")})
		if got, _ := json.Marshal(roots); !bytes.Equal(got, want) {
			t.Errorf("tree json =\n%s\nwant\n%s", got, want)
		}
		for _, key := range []string{`"providerSessionId"`, `"lastTurnId": null`, `"children": []`} {
			if !strings.Contains(out, key) {
				t.Errorf("tree json lacks %s:\n%s", key, out)
			}
		}

		dot, _, code := runTree(t, bin, h.dbPath, "--workspace", ws, "--format", "dot")
		var wantDot strings.Builder
		fmt.Fprintf(&wantDot, "digraph \"tuttid %s\" {\n  node [shape=box];\n", ws)
		for _, s := range []struct{ id, title string }{{tr.root, "root"}, {tr.c, "c"}, {tr.g, "g"}, {tr.d, "d"}, {tr.w, "w"}, {tr.u, "u"}} {
			fmt.Fprintf(&wantDot, "  %q [label=\"%s\\n[READY]\"];\n", s.id, s.title)
		}
		for _, e := range [][3]string{{tr.root, tr.c, tr.t1}, {tr.c, tr.g, tr.c1}, {tr.root, tr.d, tr.t2}, {tr.root, tr.w, "whole"}} {
			fmt.Fprintf(&wantDot, "  %q -> %q [label=%q];\n", e[0], e[1], e[2])
		}
		wantDot.WriteString("}\n")
		if code != 0 || dot != wantDot.String() {
			t.Errorf("tree dot: exit %d, output\n%s\nwant\n%s", code, dot, wantDot.String())
		}

		for _, args := range [][]string{
			{"--workspace", "no-such-workspace"},
			{"--workspace", ws, "--session", "no-such-session"},
			{"--workspace", ws, "--format", "yaml"},
		} {
			out, stderr, code := runTree(t, bin, h.dbPath, args...)
			if code != 2 || out != "" || !strings.Contains(stderr, "tuttid tree:") {
				t.Errorf("tree %v: exit %d, stdout %q, stderr %q; want exit 2, a message on stderr", args, code, out, stderr)
			}
		}
		if _, stderr, _ := runTree(t, bin, h.dbPath, "--workspace", "no-such-workspace"); !strings.Contains(stderr, "agent.workspace_not_found") {
			t.Errorf("unknown workspace: stderr %q does not name the code", stderr)
		}
	})

	t.Run("updateSession and subtree delete", func(t *testing.T) {
		c := h.ws(protoTransportWS)
		after := h.publishMarker(ws)
		sub := c.subscribe(`subscription($ws: ID!, $after: Int64) { activity(workspaceId: $ws, afterSeq: $after) {
		  kind agentSessionId session { id title archived } } }`, map[string]any{"ws": ws, "after": after})
		type event struct {
			Kind, AgentSessionID string
			Session              *struct {
				ID, Title string
				Archived  bool
			}
		}
		// events reads the updates that follow, until n have come.
		events := func(n int) []string {
			t.Helper()
			var got []string
			deadline := time.Now().Add(20 * time.Second)
			for len(got) < n {
				r, ok, _ := sub.next(time.Until(deadline))
				if !ok {
					t.Fatalf("after %v: no more events", got)
				}
				var out struct{ Activity event }
				if err := json.Unmarshal(r.Data, &out); err != nil {
					t.Fatal(err)
				}
				e := out.Activity
				if e.AgentSessionID == "" || (e.Kind != "SESSION_UPDATED" && e.Kind != "SESSION_DELETED") {
					continue // markers, SUBSCRIBED
				}
				s := ""
				if e.Session != nil {
					s = fmt.Sprintf(" %q archived=%v", e.Session.Title, e.Session.Archived)
				}
				got = append(got, e.Kind+" "+e.AgentSessionID+s)
			}
			slices.Sort(got)
			return got
		}

		got, errs := h.updateSession(map[string]any{"workspaceId": ws, "agentSessionId": tr.d, "title": "  Renamed d  "})
		if len(errs) > 0 || got.Title != "Renamed d" || got.DisplayTitle != "Renamed d" {
			t.Fatalf("rename: %+v, %+v", got, errs)
		}
		if ev := events(1); !slices.Equal(ev, []string{`SESSION_UPDATED ` + tr.d + ` "Renamed d" archived=false`}) {
			t.Errorf("rename events = %v", ev)
		}
		for _, tc := range []struct {
			in   map[string]any
			code string
		}{
			{map[string]any{"workspaceId": ws, "agentSessionId": tr.d, "title": strings.Repeat("x", 501)}, "invalid_input"},
			{map[string]any{"workspaceId": ws, "agentSessionId": tr.d}, "invalid_input"},
			{map[string]any{"workspaceId": ws, "agentSessionId": "missing", "title": "x"}, "agent.session_not_found"},
		} {
			if _, errs := h.updateSession(tc.in); len(errs) != 1 || errs[0].Code() != tc.code {
				t.Errorf("updateSession(%v) errors = %+v, want %s", tc.in, errs, tc.code)
			}
		}

		// Archiving c puts its branch (c, g) away: out of the default
		// listing and tree, still readable, listed with archived: true.
		got, errs = h.updateSession(map[string]any{"workspaceId": ws, "agentSessionId": tr.c, "archived": true})
		if len(errs) > 0 || !got.Archived {
			t.Fatalf("archive: %+v, %+v", got, errs)
		}
		if ev, want := events(2), sorted(`SESSION_UPDATED `+tr.c+` "c" archived=true`, `SESSION_UPDATED `+tr.g+` "g" archived=true`); !slices.Equal(ev, want) {
			t.Errorf("archive events = %v, want %v", ev, want)
		}
		all := sorted(tr.root, tr.c, tr.g, tr.d, tr.w, tr.u)
		if got, want := h.listed(ws, "default"), sorted(tr.root, tr.d, tr.w, tr.u); !slices.Equal(got, want) {
			t.Errorf("default listing = %v, want %v", got, want)
		}
		if got, want := h.listed(ws, "true"), sorted(tr.c, tr.g); !slices.Equal(got, want) {
			t.Errorf("archived listing = %v, want %v", got, want)
		}
		if got := h.listed(ws, "null"); !slices.Equal(got, all) {
			t.Errorf("archived: null listing = %v, want all %v", got, all)
		}
		text, _, _ := runTree(t, bin, h.dbPath, "--workspace", ws)
		if strings.Contains(text, tr.c) || strings.Contains(text, tr.g) || !strings.Contains(text, tr.d) {
			t.Errorf("tree shows archived sessions (or lost others):\n%s", text)
		}
		if text, _, _ := runTree(t, bin, h.dbPath, "--workspace", ws, "--archived"); !strings.Contains(text, tr.g) {
			t.Errorf("tree --archived leaves out g:\n%s", text)
		}
		for _, args := range [][]string{{"--session", tr.g}, {"--session", tr.d}} {
			text, _, _ := runTree(t, bin, h.dbPath, append([]string{"--workspace", ws}, args...)...)
			if wantG := args[1] == tr.g; strings.Contains(text, tr.g) != wantG || !strings.Contains(text, tr.root) {
				t.Errorf("tree %v (g archived) =\n%s", args, text)
			}
		}
		if s := h.session(ws, tr.g); s.ID != tr.g {
			t.Errorf("an archived session is no longer readable")
		}

		// Restoring g brings back its path (c), not only g.
		if got, errs = h.updateSession(map[string]any{"workspaceId": ws, "agentSessionId": tr.g, "archived": false}); len(errs) > 0 || got.Archived {
			t.Fatalf("restore: %+v, %+v", got, errs)
		}
		if ev, want := events(2), sorted(`SESSION_UPDATED `+tr.c+` "c" archived=false`, `SESSION_UPDATED `+tr.g+` "g" archived=false`); !slices.Equal(ev, want) {
			t.Errorf("restore events = %v, want %v", ev, want)
		}
		if got := h.listed(ws, "default"); !slices.Equal(got, all) {
			t.Errorf("listing after restore = %v, want all %v", got, all)
		}

		// Deleting c's subtree removes c and g in one operation, one
		// SESSION_DELETED each; the rest of the tree lives on.
		var del struct{ DeleteSession string }
		h.must(`mutation($in: DeleteSessionInput!) { deleteSession(input: $in) }`,
			map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": tr.c, "subtree": true}}, &del)
		if del.DeleteSession != tr.c {
			t.Errorf("deleteSession = %q, want %s", del.DeleteSession, tr.c)
		}
		if ev, want := events(2), sorted(`SESSION_DELETED `+tr.c+` "c" archived=false`, `SESSION_DELETED `+tr.g+` "g" archived=false`); !slices.Equal(ev, want) {
			t.Errorf("delete events = %v, want %v", ev, want)
		}
		if got, want := h.listed(ws, "null"), sorted(tr.root, tr.d, tr.w, tr.u); !slices.Equal(got, want) {
			t.Errorf("sessions after subtree delete = %v, want %v", got, want)
		}
		if text, _, _ := runTree(t, bin, h.dbPath, "--workspace", ws); strings.Contains(text, tr.c) || strings.Contains(text, tr.g) {
			t.Errorf("tree after subtree delete:\n%s", text)
		}
		if _, errs := h.compare(ws, tr.root, tr.g); len(errs) != 1 || errs[0].Code() != "agent.session_not_found" {
			t.Errorf("compare with a deleted session: %+v", errs)
		}
		// The sibling keeps working on its own thread.
		h.send(ws, tr.d, "d goes on")
	})
}
