package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"tuttid/agent"
	"tuttid/codex"
	"tuttid/codex/codextest"
	"tuttid/ent/forkjournal"
	"tuttid/ent/message"
	"tuttid/fork"
	"tuttid/store"
)

// crashRig is one test's world: a model server, a Codex home, a database
// file, shared by the tuttid processes the test starts and kills.
type crashRig struct {
	t     *testing.T
	bin   string
	model *codextest.ModelServer
	home  string
	db    string
	root  string
	start time.Time
}

func newCrashRig(t *testing.T) *crashRig {
	bin := codextest.Binary(t)
	model := codextest.StartModelServer(t)
	home := lingeringTempDir(t)
	if err := codextest.WriteCodexHome(home, model.URL()); err != nil {
		t.Fatal(err)
	}
	return &crashRig{t: t, bin: bin, model: model, home: home,
		db: filepath.Join(lingeringTempDir(t), "tuttid.db"), root: lingeringTempDir(t), start: time.Now()}
}

// lingeringTempDir is a t.TempDir whose removal waits for writers: the
// Codex child of a tuttid killed with SIGKILL outlives it (its own process
// group) until it reads EOF, and may still be writing there when the test
// ends, which fails t.TempDir's cleanup.
func lingeringTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "tuttid-crash-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		deadline := time.Now().Add(15 * time.Second)
		for {
			err := os.RemoveAll(dir)
			if err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("remove %s: %v", dir, err)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	return dir
}

func (r *crashRig) tuttid(extra ...string) *proc {
	return startTuttid(r.t, r.db, r.bin, r.home, extra...)
}

type sessionView struct {
	ID                string `json:"id"`
	Status            string `json:"status"`
	ProviderSessionID string `json:"providerSessionId"`
	Turns             []struct {
		ID       string `json:"id"`
		Status   string `json:"status"`
		Messages []struct {
			Role   string `json:"role"`
			Text   string `json:"text"`
			Status string `json:"status"`
		} `json:"messages"`
	} `json:"turns"`
	Children []struct {
		ID                string `json:"id"`
		ProviderSessionID string `json:"providerSessionId"`
	} `json:"children"`
}

func (p *proc) session(ws, id string) sessionView {
	p.t.Helper()
	var out struct{ Session sessionView }
	p.must(`query($ws: ID!, $id: ID!) { session(workspaceId: $ws, id: $id) { id status providerSessionId
		turns { id status messages { role text status } } children { id providerSessionId } } }`,
		map[string]any{"ws": ws, "id": id}, &out)
	return out.Session
}

// waitSession polls until ok holds.
func (p *proc) waitSession(ws, id, what string, ok func(sessionView) bool) sessionView {
	p.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		s := p.session(ws, id)
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("session %s: %s not reached: %+v", id, what, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func idle(s sessionView) bool {
	if s.Status != "READY" || len(s.Turns) == 0 {
		return false
	}
	for _, t := range s.Turns {
		if t.Status == "IN_PROGRESS" {
			return false
		}
	}
	return true
}

// parent makes a workspace and a session with one completed turn.
func (r *crashRig) parent(p *proc) (ws string, parent sessionView) {
	var w struct{ CreateWorkspace struct{ ID string } }
	p.must(`mutation($in: CreateWorkspaceInput!) { createWorkspace(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"name": "crash", "rootPath": r.root}}, &w)
	var s struct{ StartSession struct{ ID string } }
	p.must(`mutation($in: StartSessionInput!) { startSession(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"workspaceId": w.CreateWorkspace.ID, "title": "Parent"}}, &s)
	p.send(w.CreateWorkspace.ID, s.StartSession.ID, "hello")
	return w.CreateWorkspace.ID, p.waitSession(w.CreateWorkspace.ID, s.StartSession.ID, "first turn done", idle)
}

func (p *proc) send(ws, id, text string) {
	p.t.Helper()
	p.must(`mutation($in: SendMessageInput!) { sendMessage(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": id, "text": text}}, nil)
}

type forkPayload struct {
	ForkSession struct {
		Session struct {
			ID                string `json:"id"`
			ProviderSessionID string `json:"providerSessionId"`
		} `json:"session"`
	} `json:"forkSession"`
}

func (p *proc) fork(ws, parent, requestID string) (forkPayload, []gqlErr, error) {
	var out forkPayload
	errs, err := p.gql(`mutation($in: ForkSessionInput!) { forkSession(input: $in) { session { id providerSessionId } } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": parent, "requestId": requestID}}, &out)
	return out, errs, err
}

func (r *crashRig) orphans() []fork.Orphan {
	r.t.Helper()
	out, err := runCLI(r.t, r.home, "orphans", "--json", "--db", r.db, "--codex-bin", r.bin)
	if err != nil {
		r.t.Fatalf("tuttid orphans --json: %v", err)
	}
	var list []fork.Orphan
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		r.t.Fatalf("orphans --json output %q: %v", out, err)
	}
	return list
}

// codexForks lists, with a Codex of the test's own, the threads forked from
// thread since the test began: live ones and archived ones.
func (r *crashRig) codexForks(thread, cwd string) (live, archived []string) {
	r.t.Helper()
	rt := r.codexRuntime()
	defer rt.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, arch := range []bool{false, true} {
		found, err := rt.FindForks(ctx, agent.FindForksInput{Provider: agent.ProviderCodex,
			ParentThreadID: thread, Cwd: cwd, CreatedAfter: r.start, Archived: arch})
		if err != nil {
			r.t.Fatalf("FindForks(archived=%v): %v", arch, err)
		}
		for _, f := range found {
			if arch {
				archived = append(archived, f.ThreadID)
			} else {
				live = append(live, f.ThreadID)
			}
		}
	}
	return live, archived
}

// codexRuntime is a Codex of the test's own on the rig's home.
func (r *crashRig) codexRuntime() *codex.Runtime {
	r.t.Helper()
	rt := codex.New(codex.Config{Bin: r.bin, Env: append(os.Environ(), "CODEX_HOME="+r.home),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), RequestTimeout: 30 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := rt.Launch(ctx); err != nil {
		r.t.Fatal(err)
	}
	return rt
}

// journalAndMessages checks, straight from the database beside a running
// server, that no fork is left unfinished and no message in progress.
func (r *crashRig) journalAndMessages() {
	r.t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, r.db)
	if err != nil {
		r.t.Fatal(err)
	}
	defer st.Close()
	if n := st.Client.ForkJournal.Query().Where(forkjournal.StateIn(forkjournal.StatePending, forkjournal.StateForked)).CountX(ctx); n != 0 {
		r.t.Errorf("%d fork journal entries left unfinished after the restart", n)
	}
	if n := st.Client.Message.Query().Where(message.Status("in_progress")).CountX(ctx); n != 0 {
		r.t.Errorf("%d messages left in progress after the restart", n)
	}
}

// TestCrashDuringFork kills tuttid (SIGKILL, from inside at a named point)
// at each point of a fork on the real Codex, restarts it on the same
// database, and checks that the store, the journal and Codex agree.
func TestCrashDuringFork(t *testing.T) {
	points := []struct {
		point string
		// committed: the child was stored before the crash, so a replay
		// returns it rather than forking.
		committed bool
	}{
		{fork.CrashBeforeProvider, false},
		{fork.CrashProviderSent, false},
		{fork.CrashProviderAnswered, false},
		{fork.CrashCommitted, true},
	}
	for _, c := range points {
		t.Run(c.point, func(t *testing.T) {
			r := newCrashRig(t)
			p := r.tuttid("TUTTID_CRASH_AT=" + c.point)
			ws, parent := r.parent(p)
			if _, errs, err := p.fork(ws, parent.ID, "req-crash"); err == nil {
				t.Fatalf("the fork answered (%v) although tuttid should have died at %s", errs, c.point)
			}
			p.waitExit(10 * time.Second)

			q := r.tuttid()
			// The start settled the journal before any replay.
			r.journalAndMessages()
			if s := q.session(ws, parent.ID); len(s.Children) != 0 && !c.committed {
				t.Errorf("a child is visible after a crash at %s: %+v", c.point, s.Children)
			}
			res, errs, err := q.fork(ws, parent.ID, "req-crash")
			if err != nil || len(errs) > 0 {
				// A clear fork error code is acceptable; this design settles
				// the old attempt and forks, so none is expected.
				t.Fatalf("replay after the crash: %v %+v", err, errs)
			}
			child := res.ForkSession.Session
			again, errs, err := q.fork(ws, parent.ID, "req-crash")
			if err != nil || len(errs) > 0 || again.ForkSession.Session.ID != child.ID {
				t.Fatalf("second replay: %+v %v %+v, want child %s", again, err, errs, child.ID)
			}
			if s := q.session(ws, parent.ID); len(s.Children) != 1 || s.Children[0].ID != child.ID {
				t.Fatalf("parent's children = %+v, want exactly %s", s.Children, child.ID)
			}
			r.journalAndMessages()
			orphans := r.orphans() // while the server runs
			q.kill()

			live, archived := r.codexForks(parent.ProviderSessionID, r.root)
			if !slices.Equal(live, []string{child.ProviderSessionID}) {
				t.Errorf("live Codex forks of the parent = %v, want only the child %s", live, child.ProviderSessionID)
			}
			var listed []string
			for _, o := range orphans {
				if o.ParentAgentSessionID != parent.ID || o.RequestID != "req-crash" || o.State != "archived" {
					t.Errorf("orphan %+v", o)
				}
				listed = append(listed, o.ProviderThreadID)
			}
			slices.Sort(listed)
			slices.Sort(archived)
			if !slices.Equal(listed, archived) {
				t.Errorf("orphans listed %v, archived at Codex %v: every thread the crash left must be listed", listed, archived)
			}
			if c.point == fork.CrashProviderAnswered && len(listed) != 1 {
				t.Errorf("a crash after Codex answered must leave one listed orphan, got %v", listed)
			}
			if c.point == fork.CrashBeforeProvider || c.committed {
				if len(listed) != 0 {
					t.Errorf("no orphan expected at %s, got %v", c.point, listed)
				}
			}
		})
	}
}

// TestOrphansOnRealCodex: a live server archives the thread of a fork
// whose child it could not store, and lists it; `tuttid orphans clean`,
// run while the server runs, archives an orphan whose archive had failed.
func TestOrphansOnRealCodex(t *testing.T) {
	r := newCrashRig(t)
	p := r.tuttid()
	ws, parent := r.parent(p)
	st, err := store.Open(context.Background(), r.db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.DB.Exec(`CREATE TRIGGER fail_lineage BEFORE INSERT ON workspace_agent_session_forks BEGIN SELECT RAISE(ABORT, 'injected'); END;`); err != nil {
		t.Fatal(err)
	}
	_, errs, err := p.fork(ws, parent.ID, "req-orphan")
	if err != nil || len(errs) != 1 || errs[0].code() != "agent.fork_persistence_failed" {
		t.Fatalf("fork with failing storage: %v %+v, want agent.fork_persistence_failed", err, errs)
	}
	if _, err := st.DB.Exec(`DROP TRIGGER fail_lineage`); err != nil {
		t.Fatal(err)
	}
	text, err := runCLI(t, r.home, "orphans", "--db", r.db, "--codex-bin", r.bin)
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(text)
	if len(fields) != 4 || fields[1] != "archived" || fields[2] != parent.ID || fields[3] != "req-orphan" {
		t.Fatalf("tuttid orphans = %q, want `<thread> archived %s req-orphan`", text, parent.ID)
	}
	first := fields[0]
	p.kill()

	// An orphan whose archive failed: Codex forked, the journal says so.
	rt := r.codexRuntime()
	res, err := rt.Fork(context.Background(), agent.RuntimeForkInput{Provider: agent.ProviderCodex,
		ParentThreadID: parent.ProviderSessionID, Cwd: r.root, Settings: agent.ComposerSettings{PermissionModeID: agent.PermissionReadOnly}})
	if err != nil {
		t.Fatal(err)
	}
	rt.Close()
	second := res.Session.ThreadID
	st.Client.ForkJournal.Create().SetWorkspaceID(ws).SetRequestID("req-unarchived").SetFingerprint("f").
		SetParentAgentSessionID(parent.ID).SetParentProviderSessionID(parent.ProviderSessionID).
		SetProvider(agent.ProviderCodex).SetCwd(r.root).SetState(forkjournal.StateOrphaned).
		SetChildProviderSessionID(second).SaveX(context.Background())

	q := r.tuttid()
	out, err := runCLI(t, r.home, "orphans", "clean", "--db", r.db, "--codex-bin", r.bin)
	if err != nil {
		t.Fatalf("orphans clean: %v", err)
	}
	want := first + " archived " + parent.ID + " req-orphan\n" + second + " archived " + parent.ID + " req-unarchived\n"
	if out != want {
		t.Errorf("orphans clean printed %q, want %q", out, want)
	}
	// The server still works; its next fork is the parent's one child.
	fk, errs, err := q.fork(ws, parent.ID, "req-after")
	if err != nil || len(errs) > 0 {
		t.Fatalf("fork after clean: %v %+v", err, errs)
	}
	q.kill()
	live, archived := r.codexForks(parent.ProviderSessionID, r.root)
	wantArchived := []string{first, second}
	slices.Sort(wantArchived)
	slices.Sort(archived)
	if !slices.Equal(live, []string{fk.ForkSession.Session.ProviderSessionID}) || !slices.Equal(archived, wantArchived) {
		t.Errorf("Codex: live forks %v archived %v, want [%s] and %v", live, archived, fk.ForkSession.Session.ProviderSessionID, wantArchived)
	}
}

// TestCrashDuringTurn kills tuttid (kill -9 from outside) while a reply
// streams; after a restart the turn is settled from Codex's record, no
// message is in progress, and the session takes the next message with the
// history Codex kept.
func TestCrashDuringTurn(t *testing.T) {
	r := newCrashRig(t)
	r.model.SetReply(func(req codextest.Request) codextest.Reply {
		if req.LastUserText() == "slow" {
			return codextest.Reply{Text: "a reply cut short by a crash", Delay: time.Minute}
		}
		return codextest.DefaultReply(req)
	})
	p := r.tuttid()
	ws, parent := r.parent(p)
	p.send(ws, parent.ID, "slow")
	p.waitSession(ws, parent.ID, "the reply streaming", func(s sessionView) bool {
		for _, tr := range s.Turns {
			for _, m := range tr.Messages {
				if tr.Status == "IN_PROGRESS" && m.Role == "assistant" && m.Status == "in_progress" {
					return true
				}
			}
		}
		return false
	})
	p.kill()

	q := r.tuttid()
	r.journalAndMessages()
	s := q.session(ws, parent.ID)
	if s.Status != "READY" || len(s.Turns) != 2 {
		t.Fatalf("after restart: %+v", s)
	}
	slow := s.Turns[1]
	t.Logf("the cut turn after the restart: %s %+v", slow.Status, slow.Messages)
	if slow.Status == "IN_PROGRESS" || slow.Status == "COMPLETED" {
		t.Errorf("the cut turn is %s, want FAILED or INTERRUPTED", slow.Status)
	}
	if len(slow.Messages) == 0 || slow.Messages[0].Role != "user" || slow.Messages[0].Text != "slow" {
		t.Errorf("the cut turn's messages %+v, want the user's text kept", slow.Messages)
	}
	q.send(ws, parent.ID, "next")
	s = q.waitSession(ws, parent.ID, "next turn done", func(s sessionView) bool {
		return idle(s) && len(s.Turns) == 3 && s.Turns[2].Status == "COMPLETED"
	})
	if m := s.Turns[2].Messages; len(m) < 2 || m[len(m)-1].Text != "reply: next" {
		t.Errorf("next turn's messages %+v", m)
	}
	reqs := r.model.Requests()
	if got := reqs[len(reqs)-1].UserTexts(); len(got) < 3 || got[0] != "hello" || got[1] != "slow" || got[len(got)-1] != "next" {
		t.Errorf("the next turn's history at the model %q, want hello, slow, ..., next", got)
	}
}
