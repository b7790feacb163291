package server_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"tuttid/agent"
	"tuttid/codex"
	"tuttid/codex/codextest"
	"tuttid/ent/forkjournal"
)

// scriptedCodex is the real Codex runtime whose forks follow a script, one
// step a call: "timeout" answers a lost request without asking Codex (a
// thread/fork that timed out before Codex made anything), "hold" forks at
// Codex and then waits for release before answering (a fork in flight
// whose thread exists but is not in the journal yet), "" forks as usual.
type scriptedCodex struct {
	*codex.Runtime
	mu      sync.Mutex
	steps   []string
	held    chan struct{}
	release chan struct{}
}

func (c *scriptedCodex) Fork(ctx context.Context, in agent.RuntimeForkInput) (agent.RuntimeForkResult, error) {
	c.mu.Lock()
	step := ""
	if len(c.steps) > 0 {
		step, c.steps = c.steps[0], c.steps[1:]
	}
	c.mu.Unlock()
	if step == "timeout" {
		return agent.RuntimeForkResult{}, fmt.Errorf("%w: codex thread/fork: no reply: %w", agent.ErrRequestLost, context.DeadlineExceeded)
	}
	res, err := c.Runtime.Fork(ctx, in)
	if step == "hold" {
		close(c.held)
		<-c.release
	}
	return res, err
}

// TestReplayDoesNotArchiveSiblingOnRealCodex: a replay of a fork that
// timed out runs while a sibling fork of the same parent is in flight at
// the real Codex. The sibling's child keeps a live thread: it runs a turn
// (before the fix the replay's settle archived that thread and the child
// refused every turn with agent.provider_failed) (issue 22, point 1).
func TestReplayDoesNotArchiveSiblingOnRealCodex(t *testing.T) {
	model := codextest.StartModelServer(t)
	home := codextest.NewCodexHome(t, model.URL())
	rt := codex.New(codex.Config{Bin: codextest.Binary(t), Env: append(os.Environ(), "CODEX_HOME="+home),
		Logger: testLogger(t), RequestTimeout: 30 * time.Second})
	t.Cleanup(func() { _ = rt.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := rt.Launch(ctx); err != nil {
		t.Fatal(err)
	}
	sc := &scriptedCodex{Runtime: rt, steps: []string{"timeout", "hold"}, held: make(chan struct{}), release: make(chan struct{})}
	h := startServer(t, harnessOpts{runtime: sc, model: model, home: home})
	ws := h.createWorkspace("demo")
	parent := h.startSession(ws, "Parent")
	h.send(ws, parent.ID, "hello")

	fork := func(req string) (sessionView, []gqlError) {
		s, _, errs := h.fork(map[string]any{"workspaceId": ws, "agentSessionId": parent.ID, "requestId": req})
		return s, errs
	}
	if _, errs := fork("req-a"); len(errs) != 1 || errs[0].Code() != "agent.fork_provider_failed" {
		t.Fatalf("timed-out fork: %+v", errs)
	}
	type answer struct {
		s    sessionView
		errs []gqlError
	}
	sibling := make(chan answer, 1)
	go func() { s, errs := fork("req-b"); sibling <- answer{s, errs} }()
	<-sc.held // Codex made req-b's thread; the journal has not recorded it
	replay := make(chan answer, 1)
	go func() { s, errs := fork("req-a"); replay <- answer{s, errs} }()
	time.Sleep(time.Second) // room for a settle that does not wait for the parent's lock
	close(sc.release)
	b, a := <-sibling, <-replay
	if len(b.errs) > 0 || len(a.errs) > 0 {
		t.Fatalf("sibling %+v, replay %+v", b.errs, a.errs)
	}
	for _, e := range h.srv.Store.Client.ForkJournal.Query().Where(forkjournal.RequestID("req-a")).AllX(t.Context()) {
		if e.ChildProviderSessionID == b.s.ProviderSessionID && e.State != forkjournal.StateDone {
			t.Errorf("req-a's old attempt claimed the sibling's thread: %s %q", e.State, e.ChildProviderSessionID)
		}
	}
	// The sibling's child is alive at Codex: a turn runs.
	h.send(ws, b.s.ID, "still there?")
}

// lateCodex gives every thread/fork a 1 ms deadline at the real Codex: the
// fork times out, and Codex's reply comes after (issue 22, point 3).
type lateCodex struct{ *codex.Runtime }

func (c lateCodex) Fork(ctx context.Context, in agent.RuntimeForkInput) (agent.RuntimeForkResult, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Millisecond)
	defer cancel()
	return c.Runtime.Fork(ctx, in)
}

// TestForkTimeoutLateReplyArchivedOnRealCodex: a thread/fork that times
// out at a live Codex answers agent.fork_provider_failed; Codex's late
// reply names the thread it made, which the journal records and tuttid
// archives at Codex (before the fix the reply was dropped at debug level,
// the entry stayed pending with no thread, and the thread lived on
// unlisted) (issue 22, point 3).
func TestForkTimeoutLateReplyArchivedOnRealCodex(t *testing.T) {
	model := codextest.StartModelServer(t)
	home := codextest.NewCodexHome(t, model.URL())
	rt := codex.New(codex.Config{Bin: codextest.Binary(t), Env: append(os.Environ(), "CODEX_HOME="+home),
		Logger: testLogger(t), RequestTimeout: 30 * time.Second})
	t.Cleanup(func() { _ = rt.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := rt.Launch(ctx); err != nil {
		t.Fatal(err)
	}
	h := startServer(t, harnessOpts{runtime: lateCodex{rt}, model: model, home: home})
	ws := h.createWorkspace("demo")
	parent := h.startSession(ws, "Parent")
	h.send(ws, parent.ID, "hello")
	started := time.Now()
	_, _, errs := h.fork(map[string]any{"workspaceId": ws, "agentSessionId": parent.ID, "requestId": "req-late"})
	if len(errs) != 1 || errs[0].Code() != "agent.fork_provider_failed" {
		t.Fatalf("fork: %+v, want agent.fork_provider_failed", errs)
	}
	var thread string
	deadline := time.Now().Add(30 * time.Second)
	for {
		e := h.srv.Store.Client.ForkJournal.Query().Where(forkjournal.RequestID("req-late")).OnlyX(t.Context())
		if e.State == forkjournal.StateArchived || time.Now().After(deadline) {
			if e.State != forkjournal.StateArchived || e.ChildProviderSessionID == "" {
				t.Fatalf("journal entry %s %q (%s), want archived with the late reply's thread", e.State, e.ChildProviderSessionID, e.Error)
			}
			thread = e.ChildProviderSessionID
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	cwd := h.srv.Store.Client.AgentSession.GetX(t.Context(), parent.ID).Cwd
	archived, err := rt.FindForks(t.Context(), agent.FindForksInput{Provider: agent.ProviderCodex,
		ParentThreadID: parent.ProviderSessionID, Cwd: cwd, CreatedAfter: started, Archived: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(archived) != 1 || archived[0].ThreadID != thread {
		t.Errorf("archived forks of the parent at Codex = %+v, want %s", archived, thread)
	}
}

// TestReplayAfterChildDeletedOnRealCodex: a completed fork request
// replayed after its child was deleted answers agent.session_not_found and
// forks nothing at Codex (before the fix it made a second child) (issue
// 22, point 5).
func TestReplayAfterChildDeletedOnRealCodex(t *testing.T) {
	h := startServer(t, harnessOpts{})
	ws := h.createWorkspace("demo")
	parent := h.startSession(ws, "Parent")
	h.send(ws, parent.ID, "hello")
	in := map[string]any{"workspaceId": ws, "agentSessionId": parent.ID, "requestId": "req-del"}
	child, _, errs := h.fork(in)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	h.must(`mutation($in: DeleteSessionInput!) { deleteSession(input: $in) }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": child.ID}}, nil)
	before := h.srv.Store.Client.AgentSession.Query().CountX(t.Context())
	_, _, errs = h.fork(in)
	if len(errs) != 1 || errs[0].Code() != "agent.session_not_found" {
		t.Fatalf("replay after the child was deleted: %+v, want agent.session_not_found", errs)
	}
	if after := h.srv.Store.Client.AgentSession.Query().CountX(t.Context()); after != before {
		t.Errorf("sessions %d -> %d: the replay made a second child", before, after)
	}
	if n := h.srv.Store.Client.ForkJournal.Query().CountX(t.Context()); n != 1 {
		t.Errorf("%d journal entries, want 1 (no second attempt at Codex)", n)
	}
}
