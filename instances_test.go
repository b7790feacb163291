package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"tuttid/codex/codextest"
	"tuttid/ent/forkjournal"
	"tuttid/fork"
	"tuttid/instance"
	"tuttid/store"
	"tuttid/store/pgtest"
)

// The tests of several instances (contract, "Past one machine"): real
// tuttid processes (the test binary run as tuttid) on one real PostgreSQL
// database, each with its own Codex app-server and Codex home, one model
// server for all.

// cluster is one test's world: a database, a model server, a Codex home
// per instance id.
type cluster struct {
	t     *testing.T
	bin   string
	model *codextest.ModelServer
	db    string
	root  string
	homes map[string]string
}

func newCluster(t *testing.T) *cluster {
	db := pgtest.URL(t)
	bin := codextest.Binary(t)
	model := codextest.StartModelServer(t)
	return &cluster{t: t, bin: bin, model: model, db: db, root: lingeringTempDir(t), homes: map[string]string{}}
}

// start starts instance id (again, after a kill: same id, same Codex home).
func (c *cluster) start(id string, env ...string) *proc {
	c.t.Helper()
	home, ok := c.homes[id]
	if !ok {
		home = filepath.Join(lingeringTempDir(c.t), "codex")
		if err := codextest.WriteCodexHome(home, c.model.URL()); err != nil {
			c.t.Fatal(err)
		}
		c.homes[id] = home
	}
	env = append([]string{"TUTTID_INSTANCE_ID=" + id, "TUTTID_LOG_LEVEL=debug"}, env...)
	return startTuttid(c.t, c.db, c.bin, home, env...)
}

func (c *cluster) workspace(p *proc) string {
	c.t.Helper()
	var w struct{ CreateWorkspace struct{ ID string } }
	p.must(`mutation($in: CreateWorkspaceInput!) { createWorkspace(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"name": "instances", "rootPath": c.root}}, &w)
	return w.CreateWorkspace.ID
}

// session starts a session on p and waits for its first turn.
func (c *cluster) session(p *proc, ws, title string) string {
	c.t.Helper()
	var s struct{ StartSession struct{ ID string } }
	p.must(`mutation($in: StartSessionInput!) { startSession(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "title": title}}, &s)
	p.send(ws, s.StartSession.ID, "hello")
	p.waitSession(ws, s.StartSession.ID, "first turn done", idle)
	return s.StartSession.ID
}

// owner reads a session's instanceId on p.
func (p *proc) owner(ws, id string) string {
	p.t.Helper()
	var out struct{ Session struct{ InstanceID string } }
	p.must(`query($ws: ID!, $id: ID!) { session(workspaceId: $ws, id: $id) { instanceId } }`,
		map[string]any{"ws": ws, "id": id}, &out)
	return out.Session.InstanceID
}

// raw posts an operation and returns the answer's status and body as sent.
func (p *proc) raw(query string, vars map[string]any) (int, []byte) {
	p.t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	return p.post("/query", body)
}

func (p *proc) post(path string, body []byte) (int, []byte) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, p.url+path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		p.t.Fatal(err)
	}
	return resp.StatusCode, raw
}

// restFork posts the REST fork and decodes the child's id or the error code.
func (p *proc) restFork(ws, parent, requestID string) (status int, childID, code, message string) {
	p.t.Helper()
	body, _ := json.Marshal(map[string]any{"requestId": requestID})
	status, raw := p.post("/v1/workspaces/"+ws+"/agent-sessions/"+parent+"/fork", body)
	var out struct {
		Session struct{ ID string }
		Error   struct{ Code, Message string }
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		p.t.Fatalf("REST fork answer %s: %v", raw, err)
	}
	return status, out.Session.ID, out.Error.Code, out.Error.Message
}

// sendErr sends a message and returns the error, if any.
func (p *proc) sendErr(ws, id, text string) *gqlErr {
	p.t.Helper()
	errs, err := p.gql(`mutation($in: SendMessageInput!) { sendMessage(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": id, "text": text}}, nil)
	if err != nil {
		p.t.Fatalf("sendMessage: %v", err)
	}
	if len(errs) == 0 {
		return nil
	}
	return &errs[0]
}

func (c *cluster) instances() []instance.Info {
	c.t.Helper()
	out, err := runCLI(c.t, c.t.TempDir(), "instances", "--json", "--db", c.db)
	if err != nil {
		c.t.Fatalf("tuttid instances --json: %v", err)
	}
	var list []instance.Info
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		c.t.Fatalf("instances --json output %q: %v", out, err)
	}
	return list
}

func (c *cluster) orphans() []fork.Orphan {
	c.t.Helper()
	out, err := runCLI(c.t, c.t.TempDir(), "orphans", "--json", "--db", c.db)
	if err != nil {
		c.t.Fatalf("tuttid orphans --json: %v", err)
	}
	var list []fork.Orphan
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		c.t.Fatalf("orphans --json output %q: %v", out, err)
	}
	return list
}

func (c *cluster) children(p *proc, ws, id string) []string {
	c.t.Helper()
	var ids []string
	for _, ch := range p.session(ws, id).Children {
		ids = append(ids, ch.ID)
	}
	return ids
}

// TestInstancesForwardCommands: each command that needs the session's
// Codex, sent to the instance that does not own the session, is carried out
// by the owner, and errors come back as the owner answered them.
func TestInstancesForwardCommands(t *testing.T) {
	c := newCluster(t)
	a, b := c.start("a"), c.start("b")
	ws := c.workspace(b)
	sid := c.session(a, ws, "on a")
	if got := b.owner(ws, sid); got != "a" {
		t.Fatalf("instanceId read on b = %q, want a", got)
	}

	// sendMessage through b runs in a's Codex: b's has no such thread.
	b.send(ws, sid, "through b")
	s := b.waitSession(ws, sid, "second turn done", func(s sessionView) bool { return idle(s) && len(s.Turns) == 2 })
	if m := s.Turns[1].Messages; len(m) < 2 || m[len(m)-1].Text != "reply: through b" {
		t.Errorf("the forwarded turn's messages %+v", m)
	}

	// Errors: the same operation sent to the owner and to b answers the
	// same bytes, and b's log shows it asked a.
	errorCases := []struct{ name, query string }{
		{"steerTurn", `mutation($ws: ID!, $id: ID!) { steerTurn(input: {workspaceId: $ws, agentSessionId: $id, turnId: "no-such-turn", text: "x"}) { id } }`},
		{"interruptTurn", `mutation($ws: ID!, $id: ID!) { interruptTurn(input: {workspaceId: $ws, agentSessionId: $id, turnId: "no-such-turn"}) { id } }`},
		{"respondToApproval", `mutation($ws: ID!, $id: ID!) { respondToApproval(input: {workspaceId: $ws, agentSessionId: $id, approvalId: "no-such-approval", decision: DECLINE}) { id } }`},
		{"applySessionChanges", `mutation($ws: ID!, $id: ID!) { applySessionChanges(input: {workspaceId: $ws, agentSessionId: $id, dryRun: true}) { applied } }`},
		{"sendMessage", `mutation($ws: ID!, $id: ID!) { sendMessage(input: {workspaceId: $ws, agentSessionId: $id, text: "   "}) { id } }`},
		{"forkSession", `mutation($ws: ID!, $id: ID!) { forkSession(input: {workspaceId: $ws, agentSessionId: $id, requestId: "bad-turn", lastTurnId: "no-such-turn"}) { session { id } } }`},
	}
	for _, tc := range errorCases {
		t.Run("error passed through: "+tc.name, func(t *testing.T) {
			vars := map[string]any{"ws": ws, "id": sid}
			before := strings.Count(b.logs(), "forward: command carried out by its owner")
			sa, fromA := a.raw(tc.query, vars)
			sb, fromB := b.raw(tc.query, vars)
			if sa != sb || !bytes.Equal(fromA, fromB) {
				t.Errorf("owner answered %d %s, b answered %d %s", sa, fromA, sb, fromB)
			}
			if !bytes.Contains(fromB, []byte(`"code"`)) {
				t.Errorf("answer %s has no error code", fromB)
			}
			// b's log is read from its stderr as it comes.
			deadline := time.Now().Add(5 * time.Second)
			for strings.Count(b.logs(), "forward: command carried out by its owner") < before+1 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if after := strings.Count(b.logs(), "forward: command carried out by its owner"); after != before+1 {
				t.Errorf("b forwarded %d commands, want 1", after-before)
			}
		})
	}

	// forkSession through b: the child is a's (Codex forks in the process
	// that holds the thread), and takes messages through b.
	fk, errs, err := b.fork(ws, sid, "fork-through-b")
	if err != nil || len(errs) > 0 {
		t.Fatalf("forkSession through b: %v %+v", err, errs)
	}
	child := fk.ForkSession.Session.ID
	if got := b.owner(ws, child); got != "a" {
		t.Errorf("the child's instanceId = %q, want a", got)
	}
	b.send(ws, child, "to the child")
	b.waitSession(ws, child, "child's turn done", func(s sessionView) bool {
		return idle(s) && s.Turns[len(s.Turns)-1].Messages[len(s.Turns[len(s.Turns)-1].Messages)-1].Text == "reply: to the child"
	})

	// The REST fork through b, then its replay on the owner: one child.
	status, restChild, code, msg := b.restFork(ws, sid, "rest-through-b")
	if status != http.StatusCreated || restChild == "" {
		t.Fatalf("REST fork through b: %d %s %s", status, code, msg)
	}
	if status, again, _, _ := a.restFork(ws, sid, "rest-through-b"); status != http.StatusOK || again != restChild {
		t.Errorf("replay on a: %d %s, want 200 %s", status, again, restChild)
	}

	// updateSession archiving through b, then restoring.
	for _, archived := range []bool{true, false} {
		var out struct{ UpdateSession struct{ Archived bool } }
		b.must(`mutation($in: UpdateSessionInput!) { updateSession(input: $in) { archived } }`,
			map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": child, "archived": archived}}, &out)
		if out.UpdateSession.Archived != archived {
			t.Errorf("archived = %v, want %v", out.UpdateSession.Archived, archived)
		}
	}

	// deleteSession through b.
	b.must(`mutation($in: DeleteSessionInput!) { deleteSession(input: $in) }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": restChild}}, nil)
	if s := b.session(ws, restChild); s.ID != "" {
		t.Errorf("the deleted child is still read: %+v", s)
	}

	// The same requestId sent to both instances at once: one child.
	var wg sync.WaitGroup
	ids := make([]string, 2)
	for i, p := range []*proc{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fk, errs, err := p.fork(ws, sid, "same-request")
			if err != nil || len(errs) > 0 {
				t.Errorf("fork on instance %d: %v %+v", i, err, errs)
			}
			ids[i] = fk.ForkSession.Session.ID
		}()
	}
	wg.Wait()
	if ids[0] == "" || ids[0] != ids[1] {
		t.Errorf("the same request on a and b made %v, want one child", ids)
	}
	if kids := c.children(b, ws, sid); len(kids) != 2 { // fork-through-b and same-request
		t.Errorf("the parent has children %v, want 2", kids)
	}

	list := c.instances()
	if len(list) != 2 || list[0].ID != "a" || list[1].ID != "b" || !list[0].Alive || !list[1].Alive {
		t.Fatalf("tuttid instances: %+v", list)
	}
	if list[0].Sessions != 3 || list[1].Sessions != 0 || !strings.HasPrefix(list[0].AdvertiseURL, "http://127.0.0.1:") {
		t.Errorf("tuttid instances: %+v, want a owning 3 sessions at its URL, b none", list)
	}
}

// TestInstanceOwnerDownAndBack: the owner killed -9 while a turn streams;
// the other instance answers reads and agent.session_unavailable naming
// it; the owner's restart settles its own turn (not the other's running
// one), and its sessions work again through the other.
func TestInstanceOwnerDownAndBack(t *testing.T) {
	c := newCluster(t)
	c.model.SetReply(func(req codextest.Request) codextest.Reply {
		if strings.HasPrefix(req.LastUserText(), "slow") {
			return codextest.Reply{Text: "a reply that takes its time", Delay: 2 * time.Minute}
		}
		return codextest.DefaultReply(req)
	})
	a, b := c.start("a"), c.start("b")
	ws := c.workspace(a)
	sa := c.session(a, ws, "on a")
	sb := c.session(b, ws, "on b")
	streaming := func(s sessionView) bool {
		for _, tr := range s.Turns {
			for _, m := range tr.Messages {
				if tr.Status == "IN_PROGRESS" && m.Role == "assistant" && m.Status == "in_progress" {
					return true
				}
			}
		}
		return false
	}
	b.send(ws, sb, "slow on b")
	b.waitSession(ws, sb, "b's reply streaming", streaming)
	b.send(ws, sa, "slow on a") // forwarded to a
	b.waitSession(ws, sa, "a's reply streaming", streaming)
	a.kill()

	// Reads go on; a's commands fail at once (nobody answers) and after
	// the heartbeat is stale (a is down), naming a.
	if s := b.session(ws, sa); s.ID != sa {
		t.Fatalf("read on b: %+v", s)
	}
	if e := b.sendErr(ws, sa, "while a is gone"); e == nil || e.code() != "agent.session_unavailable" || !strings.Contains(e.Message, `"a"`) {
		t.Errorf("send while a is gone: %+v, want agent.session_unavailable naming a", e)
	}
	deadline := time.Now().Add(instance.DownAfter + 2*instance.HeartbeatEvery)
	for {
		e := b.sendErr(ws, sa, "while a is down")
		if e != nil && e.code() == "agent.session_unavailable" && strings.Contains(e.Message, "down") {
			if !strings.Contains(e.Message, `"a"`) {
				t.Errorf("message %q does not name a", e.Message)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a not taken for down: %+v", e)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if status, _, code, msg := b.restFork(ws, sa, "while-down"); status != http.StatusServiceUnavailable || code != "agent.session_unavailable" {
		t.Errorf("REST fork while a is down: %d %s %s, want 503 agent.session_unavailable", status, code, msg)
	}
	if list := c.instances(); len(list) != 2 || list[0].Alive || !list[1].Alive {
		t.Errorf("tuttid instances while a is down: %+v", list)
	}

	// a comes back: it settles its own cut turn, not b's running one.
	a = c.start("a")
	s := b.waitSession(ws, sa, "a's cut turn settled", func(s sessionView) bool { return s.Status == "READY" })
	if cut := s.Turns[len(s.Turns)-1]; cut.Status == "IN_PROGRESS" || cut.Status == "COMPLETED" {
		t.Errorf("a's cut turn is %s, want FAILED or INTERRUPTED", cut.Status)
	}
	if s := a.session(ws, sb); !streaming(s) {
		t.Errorf("b's running turn after a's restart: %+v, want still streaming", s)
	}
	// One mutation cannot carry commands of two instances' sessions.
	errs, err := b.gql(`mutation($ws: ID!, $a: ID!, $b: ID!) {
		one: sendMessage(input: {workspaceId: $ws, agentSessionId: $a, text: "x"}) { id }
		two: sendMessage(input: {workspaceId: $ws, agentSessionId: $b, text: "y"}) { id } }`,
		map[string]any{"ws": ws, "a": sa, "b": sb}, nil)
	if err != nil || len(errs) != 1 || errs[0].code() != "invalid_input" || !strings.Contains(errs[0].Message, "separate operations") {
		t.Errorf("a mutation for sessions of a and b: %v %+v, want invalid_input", err, errs)
	}
	b.send(ws, sa, "after the restart")
	b.waitSession(ws, sa, "turn after the restart done", func(s sessionView) bool {
		last := s.Turns[len(s.Turns)-1]
		return idle(s) && last.Status == "COMPLETED" && last.Messages[len(last.Messages)-1].Text == "reply: after the restart"
	})
	// interruptTurn of b's turn through a.
	running := a.session(ws, sb).Turns
	a.must(`mutation($in: InterruptTurnInput!) { interruptTurn(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": sb, "turnId": running[len(running)-1].ID}}, nil)
	a.waitSession(ws, sb, "b's turn interrupted", func(s sessionView) bool {
		return s.Status == "READY" && s.Turns[len(s.Turns)-1].Status == "INTERRUPTED"
	})
}

// TestInstanceForwardedForkOwnerDies: a fork sent to b dies with its owner
// a mid-way (after Codex made the child thread): b answers
// agent.session_unavailable naming a; b's restart leaves a's journal entry
// alone; a's restart settles it; tuttid orphans lists it as a's; the same
// request then makes one child.
func TestInstanceForwardedForkOwnerDies(t *testing.T) {
	c := newCluster(t)
	a := c.start("a", "TUTTID_CRASH_AT="+fork.CrashProviderAnswered)
	b := c.start("b")
	ws := c.workspace(b)
	sid := c.session(a, ws, "on a")

	_, errs, err := b.fork(ws, sid, "cut-short")
	if err != nil || len(errs) != 1 || errs[0].code() != "agent.session_unavailable" || !strings.Contains(errs[0].Message, `"a"`) {
		t.Fatalf("fork whose owner died: %v %+v, want agent.session_unavailable naming a", err, errs)
	}
	a.waitExit(30 * time.Second)
	if s := b.session(ws, sid); s.ID != sid || !idle(s) {
		t.Errorf("read on b after a died: %+v", s)
	}
	if e := b.sendErr(ws, sid, "while a is gone"); e == nil || e.code() != "agent.session_unavailable" {
		t.Errorf("send while a is gone: %+v, want agent.session_unavailable", e)
	}

	journal := func() []forkjournal.State {
		st, err := store.Open(context.Background(), c.db, store.ReadOnly)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		var states []forkjournal.State
		for _, e := range st.Client.ForkJournal.Query().Where(forkjournal.RequestID("cut-short")).AllX(context.Background()) {
			if e.InstanceID != "a" {
				t.Errorf("journal entry written by %q, want a", e.InstanceID)
			}
			states = append(states, e.State)
		}
		return states
	}
	if got := journal(); len(got) != 1 || got[0] != forkjournal.StateForked {
		t.Fatalf("journal after the crash: %v, want [forked]", got)
	}
	b.kill()
	b = c.start("b")
	if got := journal(); len(got) != 1 || got[0] != forkjournal.StateForked {
		t.Errorf("journal after b's restart: %v, want [forked]: b settled a's entry", got)
	}

	a = c.start("a")
	if got := journal(); len(got) != 1 || (got[0] != forkjournal.StateArchived && got[0] != forkjournal.StateOrphaned) {
		t.Errorf("journal after a's restart: %v, want archived (or orphaned)", got)
	}
	orphans := c.orphans()
	if len(orphans) != 1 || orphans[0].InstanceID != "a" || orphans[0].RequestID != "cut-short" {
		t.Errorf("tuttid orphans: %+v, want cut-short made by a", orphans)
	}
	fk, errs, err := b.fork(ws, sid, "cut-short")
	if err != nil || len(errs) > 0 {
		t.Fatalf("the same request after a's restart: %v %+v", err, errs)
	}
	if kids := c.children(b, ws, sid); len(kids) != 1 || kids[0] != fk.ForkSession.Session.ID {
		t.Errorf("children %v, want [%s]", kids, fk.ForkSession.Session.ID)
	}
	if got := a.owner(ws, fk.ForkSession.Session.ID); got != "a" {
		t.Errorf("the child's instanceId read on a = %q, want a", got)
	}
}
