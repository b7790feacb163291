package codex

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"tuttid/agent"
)

const wait = 10 * time.Second

// fakeRig is a Runtime wired to the scripted fake app-server.
type fakeRig struct {
	rt  *Runtime
	ev  *EventRecorder
	dir string
}

func fakeConfig(t *testing.T, dir, scenario string) Config {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Config{
		Bin:               exe,
		Env:               append(os.Environ(), fakeScenarioEnv+"="+scenario, fakeDirEnv+"="+dir),
		Logger:            testLogger(t),
		RequestTimeout:    wait,
		RestartBackoffMin: 20 * time.Millisecond,
		RestartBackoffMax: 200 * time.Millisecond,
		StopGrace:         2 * time.Second,
	}
}

func startFake(t *testing.T, scenario string, tweak ...func(*Config)) *fakeRig {
	t.Helper()
	dir := t.TempDir()
	cfg := fakeConfig(t, dir, scenario)
	for _, f := range tweak {
		f(&cfg)
	}
	return launchRig(t, dir, cfg)
}

func launchRig(t *testing.T, dir string, cfg Config) *fakeRig {
	t.Helper()
	rt := New(cfg)
	ev := RecordEvents(rt.Events())
	t.Cleanup(func() { _ = rt.Close() })
	if err := rt.Launch(context.Background()); err != nil {
		t.Fatalf("Launch: %v", err)
	}
	return &fakeRig{rt: rt, ev: ev, dir: dir}
}

// testLogger sends logs to the test log, visible with -v or on failure.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	defer func() { _ = recover() }() // a log line after the test ended
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	t.Cleanup(cancel)
	return ctx
}

var defaultSettings = agent.ComposerSettings{Model: "m1", ReasoningEffort: "low", PermissionModeID: agent.PermissionWorkspaceWrite}

func (g *fakeRig) start(t *testing.T, s agent.ComposerSettings) agent.RuntimeSession {
	t.Helper()
	sess, err := g.rt.Start(ctxT(t), agent.StartInput{Provider: agent.ProviderCodex, Cwd: "/work", Settings: s})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	return sess
}

// turn sends a turn and waits for its completion event.
func (g *fakeRig) turn(t *testing.T, thread, text string, s agent.ComposerSettings) (agent.RuntimeTurn, agent.Event) {
	t.Helper()
	turn, err := g.rt.SendTurn(ctxT(t), agent.SendTurnInput{Provider: agent.ProviderCodex, ThreadID: thread, Cwd: "/work", Settings: s, Text: text})
	if err != nil {
		t.Fatalf("SendTurn: %v", err)
	}
	return turn, g.ev.Wait(t, wait, "turn completion", TurnDone(turn.ID))
}

type fakeLogEntry struct {
	Dir    string          `json:"dir"`
	Gen    int             `json:"gen"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Answer json.RawMessage `json:"answer"`
}

func (g *fakeRig) log(t *testing.T) []fakeLogEntry {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(g.dir, "log.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []fakeLogEntry
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var e fakeLogEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

func (g *fakeRig) methods(t *testing.T) []string {
	var out []string
	for _, e := range g.log(t) {
		if e.Dir == "in" {
			out = append(out, e.Method)
		}
	}
	return out
}

func TestFakeTurnEventsAndHistory(t *testing.T) {
	g := startFake(t, "normal")
	sess := g.start(t, defaultSettings)
	if sess.ThreadID == "" || sess.Status != agent.ThreadIdle || sess.Model != "fake-model" || sess.Cwd != "/work" {
		t.Fatalf("session = %+v", sess)
	}
	turn, done := g.turn(t, sess.ThreadID, "hi", defaultSettings)
	if turn.Status != agent.TurnInProgress || done.Status != string(agent.TurnCompleted) {
		t.Fatalf("turn %+v, completion %+v", turn, done)
	}
	// Order of this turn's events as the fake sent them.
	var kinds []string
	for _, e := range g.ev.Events() {
		if e.ThreadID == sess.ThreadID {
			kinds = append(kinds, string(e.Kind))
		}
	}
	want := "thread_status turn_started item_started item_completed token_usage item_started message_delta message_delta item_completed thread_status turn_completed"
	if got := strings.Join(kinds, " "); !strings.HasSuffix(got, want) {
		t.Fatalf("event order\n got %s\nwant …%s", got, want)
	}
	asst := g.ev.Wait(t, wait, "assistant item", func(e agent.Event) bool {
		return e.Kind == agent.EventItemCompleted && e.Message.Role == "assistant"
	})
	if asst.Message.Text != "echo: hi" || asst.Message.TurnID != turn.ID || asst.TurnID != turn.ID {
		t.Fatalf("assistant message = %+v", asst.Message)
	}
	hist, err := g.rt.History(ctxT(t), agent.HistoryInput{Provider: agent.ProviderCodex, ThreadID: sess.ThreadID})
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 1 || hist[0].ID != turn.ID || len(hist[0].Messages) != 2 ||
		hist[0].Messages[0].Role != "user" || hist[0].Messages[0].Text != "hi" || hist[0].Messages[1].Text != "echo: hi" {
		t.Fatalf("history = %+v", hist)
	}
	// The turn carried the settings as overrides; the sandbox did not
	// change since thread/start, so no sandboxPolicy.
	var ts map[string]any
	for _, e := range g.log(t) {
		if e.Method == "turn/start" {
			_ = json.Unmarshal(e.Params, &ts)
		}
	}
	if ts["model"] != "m1" || ts["effort"] != "low" || ts["approvalPolicy"] != "on-request" || ts["cwd"] != "/work" || ts["sandboxPolicy"] != nil {
		t.Fatalf("turn/start params = %v", ts)
	}
}

func TestFakeCrashMidTurnFailsTurnRestartsAndResumes(t *testing.T) {
	g := startFake(t, "crash_mid_turn")
	sess := g.start(t, defaultSettings)
	thread := sess.ThreadID
	turn, err := g.rt.SendTurn(ctxT(t), agent.SendTurnInput{Provider: agent.ProviderCodex, ThreadID: thread, Cwd: "/work", Settings: defaultSettings, Text: "boom"})
	if err != nil {
		t.Fatal(err)
	}
	failed := g.ev.Wait(t, wait, "failed turn", TurnDone(turn.ID))
	if failed.Status != string(agent.TurnFailed) || !strings.Contains(failed.Error, "exited unexpectedly") || failed.ThreadID != thread {
		t.Fatalf("completion = %+v", failed)
	}
	g.ev.Wait(t, wait, "systemError status", func(e agent.Event) bool {
		return e.Kind == agent.EventThreadStatus && e.Status == string(agent.ThreadSystemError) && e.ThreadID == thread
	})
	g.ev.Wait(t, wait, "restart", func(e agent.Event) bool { return e.Kind == agent.EventRuntimeRestarted })

	// The new process has not loaded the thread: the runtime resumes it.
	_, done := g.turn(t, thread, "again", defaultSettings)
	if done.Status != string(agent.TurnCompleted) {
		t.Fatalf("turn after restart = %+v", done)
	}
	var start, resume map[string]any
	for _, e := range g.log(t) {
		switch {
		case e.Method == "thread/start":
			_ = json.Unmarshal(e.Params, &start)
		case e.Method == "thread/resume" && e.Gen == 2:
			_ = json.Unmarshal(e.Params, &resume)
		}
	}
	if resume == nil {
		t.Fatalf("no thread/resume after restart: %v", g.methods(t))
	}
	if resume["threadId"] != thread {
		t.Fatalf("resume threadId = %v", resume["threadId"])
	}
	delete(resume, "threadId")
	delete(resume, "excludeTurns")
	// thread/resume has no ephemeral or threadSource in the protocol.
	delete(start, "ephemeral")
	delete(start, "threadSource")
	if a, b := mustJSON(t, start), mustJSON(t, resume); a != b {
		t.Fatalf("resume params differ from start params:\nstart  %s\nresume %s", a, b)
	}
}

func TestFakeTurnStartThreadNotFoundResumesAndRetries(t *testing.T) {
	g := startFake(t, "normal")
	sess := g.start(t, defaultSettings)
	// Restart the app-server, then make the runtime believe the new process
	// has the thread loaded: Codex answers turn/start with "thread not
	// found", and the runtime must resume and retry once.
	killCurrent(t, g.rt)
	g.ev.Wait(t, wait, "restart", func(e agent.Event) bool { return e.Kind == agent.EventRuntimeRestarted })
	g.rt.mu.Lock()
	g.rt.threads[sess.ThreadID].loadedGen = g.rt.proc.gen // wrong: gen 2 never loaded it
	g.rt.mu.Unlock()

	_, done := g.turn(t, sess.ThreadID, "retry", defaultSettings)
	if done.Status != string(agent.TurnCompleted) {
		t.Fatalf("completion = %+v", done)
	}
	var gen2 []string
	for _, e := range g.log(t) {
		if e.Gen == 2 && e.Dir == "in" {
			gen2 = append(gen2, e.Method)
		}
	}
	if got, want := strings.Join(gen2, " "), "initialize initialized turn/start thread/resume turn/start"; got != want {
		t.Fatalf("gen 2 requests = %q, want %q", got, want)
	}
}

func killCurrent(t *testing.T, rt *Runtime) {
	t.Helper()
	p, err := rt.current()
	if err != nil {
		t.Fatal(err)
	}
	p.Kill()
}

func TestFakeDownFailsFastAndCloseInterruptsBackoff(t *testing.T) {
	g := startFake(t, "normal", func(c *Config) {
		c.RestartBackoffMin, c.RestartBackoffMax = time.Hour, time.Hour
	})
	sess := g.start(t, defaultSettings)
	p, _ := g.rt.current()
	p.Kill()
	<-p.Exited()
	// Wait until the supervisor noticed (it reports before backing off).
	deadline := time.Now().Add(wait)
	for g.rt.Health(context.Background()) == nil {
		if time.Now().After(deadline) {
			t.Fatal("Health still nil after the process died")
		}
		time.Sleep(5 * time.Millisecond)
	}
	t0 := time.Now()
	_, err := g.rt.SendTurn(ctxT(t), agent.SendTurnInput{Provider: agent.ProviderCodex, ThreadID: sess.ThreadID, Settings: defaultSettings, Text: "x"})
	if !errors.Is(err, agent.ErrRuntimeUnavailable) || time.Since(t0) > time.Second {
		t.Fatalf("SendTurn while down: %v after %s", err, time.Since(t0))
	}
	if err := g.rt.Health(context.Background()); !errors.Is(err, agent.ErrRuntimeUnavailable) {
		t.Fatalf("Health = %v", err)
	}
	t0 = time.Now()
	_ = g.rt.Close()
	g.ev.WaitClosed(t, wait)
	if d := time.Since(t0); d > 2*time.Second {
		t.Fatalf("Close took %s during a 1h backoff", d)
	}
}

func TestFakeProcessDeathFailsPendingRequestAtOnce(t *testing.T) {
	g := startFake(t, "crash_on_thread_start")
	t0 := time.Now()
	_, err := g.rt.Start(ctxT(t), agent.StartInput{Provider: agent.ProviderCodex, Settings: defaultSettings})
	if !errors.Is(err, agent.ErrRuntimeUnavailable) {
		t.Fatalf("Start = %v, want ErrRuntimeUnavailable", err)
	}
	if d := time.Since(t0); d > 5*time.Second {
		t.Fatalf("pending request failed after %s, not at once", d)
	}
	g.ev.Wait(t, wait, "restart", func(e agent.Event) bool { return e.Kind == agent.EventRuntimeRestarted })
	g.start(t, defaultSettings) // gen 2 behaves
}

func TestFakeRequestTimeoutAndCancel(t *testing.T) {
	g := startFake(t, "hang:thread/start", func(c *Config) { c.RequestTimeout = time.Second })
	t0 := time.Now()
	_, err := g.rt.Start(context.Background(), agent.StartInput{Provider: agent.ProviderCodex, Settings: defaultSettings})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "did not answer within 1s") {
		t.Fatalf("Start = %v", err)
	}
	if d := time.Since(t0); d > 3*time.Second {
		t.Fatalf("timeout took %s", d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	if _, err := g.rt.Start(ctx, agent.StartInput{Provider: agent.ProviderCodex, Settings: defaultSettings}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Start = %v", err)
	}
	// The client is still usable: other methods answer.
	_, err = g.rt.History(ctxT(t), agent.HistoryInput{Provider: agent.ProviderCodex, ThreadID: "01a23748-0000-7000-8000-000000000000"})
	if !errors.Is(err, agent.ErrThreadNotFound) {
		t.Fatalf("History after timeouts = %v", err)
	}
}

func TestFakeMalformedLinesAreSkipped(t *testing.T) {
	g := startFake(t, "malformed", func(c *Config) { c.MaxLineBytes = 2048 })
	sess := g.start(t, defaultSettings)
	_, done := g.turn(t, sess.ThreadID, "still fine", defaultSettings)
	if done.Status != string(agent.TurnCompleted) {
		t.Fatalf("completion = %+v", done)
	}
	if err := g.rt.Health(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestFakeErrorRepliesMapToSentinels(t *testing.T) {
	g := startFake(t, "slow_turn")
	sess := g.start(t, defaultSettings)
	thread := sess.ThreadID
	turn, err := g.rt.SendTurn(ctxT(t), agent.SendTurnInput{Provider: agent.ProviderCodex, ThreadID: thread, Settings: defaultSettings, Text: "slow"})
	if err != nil {
		t.Fatal(err)
	}
	g.ev.Wait(t, wait, "turn start", func(e agent.Event) bool { return e.Kind == agent.EventTurnStarted && e.TurnID == turn.ID })
	fork := func(src, last string) error {
		_, err := g.rt.Fork(ctxT(t), agent.RuntimeForkInput{Provider: agent.ProviderCodex, ParentThreadID: src, LastTurnID: last, Settings: defaultSettings})
		return err
	}
	cases := []struct {
		name string
		err  error
		want error
	}{
		{"unknown turn", fork(thread, "nope"), agent.ErrTurnNotFound},
		{"running turn", fork(thread, turn.ID), agent.ErrTurnInProgress},
		{"unknown thread", fork("01a23748-0000-7000-8000-000000000000", ""), agent.ErrThreadNotFound},
		{"interrupt unknown turn", g.rt.Interrupt(ctxT(t), agent.InterruptInput{Provider: agent.ProviderCodex, ThreadID: thread, TurnID: "nope"}), agent.ErrTurnNotFound},
	}
	for _, c := range cases {
		var pe *agent.ProviderError
		if !errors.Is(c.err, c.want) || !errors.Is(c.err, agent.ErrProviderFailed) || !errors.As(c.err, &pe) || pe.Code != -32600 {
			t.Errorf("%s: %v, want %v", c.name, c.err, c.want)
		}
	}
	// And the interrupt that works.
	if err := g.rt.Interrupt(ctxT(t), agent.InterruptInput{Provider: agent.ProviderCodex, ThreadID: thread, TurnID: turn.ID}); err != nil {
		t.Fatal(err)
	}
	if done := g.ev.Wait(t, wait, "interrupted turn", TurnDone(turn.ID)); done.Status != string(agent.TurnInterrupted) {
		t.Fatalf("completion = %+v", done)
	}
}

func TestFakeFork(t *testing.T) {
	for _, c := range []struct {
		scenario      string
		wantAvailable bool
		wantRead      bool // history read after fork
	}{
		{"normal", true, false},
		{"fork_no_turns", true, true},
		{"fork_no_history", false, true},
	} {
		t.Run(c.scenario, func(t *testing.T) {
			g := startFake(t, c.scenario)
			parent := g.start(t, defaultSettings).ThreadID
			t1, _ := g.turn(t, parent, "one", defaultSettings)
			g.turn(t, parent, "two", defaultSettings)
			res, err := g.rt.Fork(ctxT(t), agent.RuntimeForkInput{
				Provider: agent.ProviderCodex, ParentThreadID: parent, LastTurnID: t1.ID,
				Cwd: "/work", Settings: defaultSettings,
			})
			if err != nil {
				t.Fatalf("Fork: %v", err)
			}
			child := res.Session.ThreadID
			if child == "" || child == parent || res.Session.ForkedFromID != parent {
				t.Fatalf("session = %+v", res.Session)
			}
			if l := res.Fork; l.ParentThreadID != parent || l.ChildThreadID != child || l.Provider != "codex" || l.LastTurnID != t1.ID || time.Since(l.ForkedAt) > time.Minute {
				t.Fatalf("lineage = %+v", l)
			}
			turns, available := forkHistory(t, res)
			if available != c.wantAvailable {
				t.Fatalf("history available = %v", available)
			}
			if c.wantAvailable {
				if len(turns) != 1 || turns[0].ID != t1.ID || turns[0].Messages[0].Text != "one" {
					t.Fatalf("turns = %+v", turns)
				}
			} else if len(turns) != 0 {
				t.Fatalf("turns without history = %+v", turns)
			}
			read := false
			for _, e := range g.log(t) {
				var p struct{ ThreadID string }
				_ = json.Unmarshal(e.Params, &p)
				if e.Method == "thread/turns/list" && p.ThreadID == child {
					read = true
				}
			}
			if read != c.wantRead {
				t.Fatalf("child history read = %v, want %v (%v)", read, c.wantRead, g.methods(t))
			}
			// The fork got the same settings-derived params as thread/start.
			var start, fork map[string]any
			for _, e := range g.log(t) {
				switch e.Method {
				case "thread/start":
					_ = json.Unmarshal(e.Params, &start)
				case "thread/fork":
					_ = json.Unmarshal(e.Params, &fork)
				}
			}
			if fork["threadId"] != parent || fork["lastTurnId"] != t1.ID || fork["excludeTurns"] != true {
				t.Fatalf("fork params = %v", fork)
			}
			delete(fork, "threadId")
			delete(fork, "lastTurnId")
			delete(fork, "excludeTurns")
			if a, b := mustJSON(t, start), mustJSON(t, fork); a != b {
				t.Fatalf("fork params differ from start params:\nstart %s\nfork  %s", a, b)
			}
		})
	}
}

func TestFakeForkOfEmptyThread(t *testing.T) {
	g := startFake(t, "fork_no_turns")
	parent := g.start(t, defaultSettings).ThreadID
	res, err := g.rt.Fork(ctxT(t), agent.RuntimeForkInput{Provider: agent.ProviderCodex, ParentThreadID: parent, Settings: defaultSettings})
	if err != nil {
		t.Fatal(err)
	}
	if turns, available := forkHistory(t, res); !available || len(turns) != 0 {
		t.Fatalf("empty fork: available=%v turns=%v", available, turns)
	}
	// The fork params omit an empty lastTurnId.
	for _, e := range g.log(t) {
		if e.Method == "thread/fork" && bytes.Contains(e.Params, []byte("lastTurnId")) {
			t.Fatalf("fork params = %s", e.Params)
		}
	}
}

func TestFakeHistoryPagesAndFallback(t *testing.T) {
	for _, scenario := range []string{"normal", "no_turns_list"} {
		t.Run(scenario, func(t *testing.T) {
			g := startFake(t, scenario)
			g.rt.pageSize = 1
			thread := g.start(t, defaultSettings).ThreadID
			empty, err := g.rt.History(ctxT(t), agent.HistoryInput{Provider: agent.ProviderCodex, ThreadID: thread})
			if err != nil || len(empty) != 0 {
				t.Fatalf("history of a new thread = %v, %v", empty, err)
			}
			var ids []string
			for _, text := range []string{"a", "b", "c"} {
				turn, _ := g.turn(t, thread, text, defaultSettings)
				ids = append(ids, turn.ID)
			}
			hist, err := g.rt.History(ctxT(t), agent.HistoryInput{Provider: agent.ProviderCodex, ThreadID: thread})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, h := range hist {
				got = append(got, h.ID)
			}
			if strings.Join(got, ",") != strings.Join(ids, ",") {
				t.Fatalf("history turns = %v, want %v", got, ids)
			}
			if scenario == "no_turns_list" && !strings.Contains(strings.Join(g.methods(t), " "), "thread/read") {
				t.Fatal("no thread/read fallback")
			}
		})
	}
}

func TestFakeApprovalsFollowPermissionMode(t *testing.T) {
	const (
		cmd   = "item/commandExecution/requestApproval"
		file  = "item/fileChange/requestApproval"
		perms = "item/permissions/requestApproval"
		input = "item/tool/requestUserInput"
		elic  = "mcpServer/elicitation/request"
		exec  = "execCommandApproval"
		patch = "applyPatchApproval"
		tool  = "item/tool/call"
	)
	toolFailed := `{"contentItems":[{"text":"tuttid provides no dynamic tools","type":"inputText"}],"success":false}`
	declined := map[string]string{
		cmd:   `{"decision":"decline"}`,
		file:  `{"decision":"decline"}`,
		perms: `{"permissions":{},"scope":"turn"}`,
		input: `{"answers":{}}`,
		elic:  `{"_meta":null,"action":"decline","content":null}`,
		exec:  `{"decision":{"denied":{"rejection":"declined"}}}`,
		patch: `{"decision":{"denied":{"rejection":"declined"}}}`,
		tool:  toolFailed,
	}
	accepted := map[string]string{
		cmd:   `{"decision":"accept"}`,
		file:  `{"decision":"accept"}`,
		perms: `{"permissions":{"network":{"enabled":true}},"scope":"turn"}`,
		input: `{"answers":{}}`,
		elic:  `{"_meta":null,"action":"accept","content":null}`,
		exec:  `{"decision":"approved"}`,
		patch: `{"decision":"approved"}`,
		tool:  toolFailed,
	}
	// In workspace-write a person answers; these are their decisions.
	person := map[string]agent.ApprovalResponse{
		cmd:   {Decision: agent.DecisionAccept},
		file:  {Decision: agent.DecisionAcceptForSession},
		perms: {Decision: agent.DecisionAcceptForSession},
		input: {Decision: agent.DecisionAccept, Answers: json.RawMessage(`{"q1":{"answers":["yes"]}}`)},
		elic:  {Decision: agent.DecisionAccept, Answers: json.RawMessage(`{"name":"x"}`)},
		exec:  {Decision: agent.DecisionDecline},
		patch: {Decision: agent.DecisionCancel},
	}
	answered := map[string]string{
		cmd:   `{"decision":"accept"}`,
		file:  `{"decision":"acceptForSession"}`,
		perms: `{"permissions":{"network":{"enabled":true}},"scope":"session"}`,
		input: `{"answers":{"q1":{"answers":["yes"]}}}`,
		elic:  `{"_meta":null,"action":"accept","content":{"name":"x"}}`,
		exec:  declined[exec],
		patch: `{"decision":"abort"}`,
		tool:  toolFailed,
	}
	for _, c := range []struct {
		mode string
		want map[string]string
	}{
		{agent.PermissionReadOnly, declined},
		{agent.PermissionFullAccess, accepted},
		{agent.PermissionWorkspaceWrite, answered},
	} {
		t.Run("mode="+c.mode, func(t *testing.T) {
			g := startFake(t, "approvals")
			s := defaultSettings
			s.PermissionModeID = c.mode
			var asked []agent.ApprovalRequest
			var mu sync.Mutex
			g.ev.AnswerApprovals(t, g.rt, func(r agent.ApprovalRequest) agent.ApprovalResponse {
				mu.Lock()
				asked = append(asked, r)
				mu.Unlock()
				return person[r.Method]
			})
			thread := g.start(t, s).ThreadID
			if _, done := g.turn(t, thread, "do it", s); done.Status != string(agent.TurnCompleted) {
				t.Fatalf("completion = %+v", done)
			}
			got := map[string]string{}
			for _, e := range g.log(t) {
				if e.Dir == "answer" {
					got[e.Method] = mustJSON(t, e.Answer)
				}
			}
			for m, want := range c.want {
				if got[m] != mustJSON(t, json.RawMessage(want)) {
					t.Errorf("%s answered %s, want %s", m, got[m], want)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if c.mode != agent.PermissionWorkspaceWrite {
				if len(asked) != 0 {
					t.Fatalf("%s asked a person: %+v", c.mode, asked)
				}
				return
			}
			if len(asked) != len(person) {
				t.Fatalf("asked %d requests, want %d: %+v", len(asked), len(person), asked)
			}
			for _, r := range asked {
				if !slices.Contains(r.AvailableDecisions, agent.DecisionDecline) || !slices.Contains(r.AvailableDecisions, agent.DecisionCancel) ||
					r.ThreadID != thread || r.ID == "" || len(r.Details) == 0 {
					t.Errorf("request %+v", r)
				}
			}
			for _, e := range g.ev.Events() {
				if e.Kind == agent.EventApprovalResolved && e.Resolution.By != "user" {
					t.Errorf("resolved without the person: %+v", e.Resolution)
				}
			}
		})
	}
}

func TestFakeModeChangeSendsSandboxPolicy(t *testing.T) {
	g := startFake(t, "approvals")
	thread := g.start(t, defaultSettings).ThreadID
	full := defaultSettings
	full.PermissionModeID = agent.PermissionFullAccess
	g.turn(t, thread, "now with full access", full)
	var ts map[string]any
	for _, e := range g.log(t) {
		if e.Method == "turn/start" {
			_ = json.Unmarshal(e.Params, &ts)
		}
		if e.Dir == "answer" && e.Method == "item/commandExecution/requestApproval" && !strings.Contains(string(e.Answer), "accept") {
			t.Fatalf("approval after switching to full access: %s", e.Answer)
		}
	}
	if sp, _ := ts["sandboxPolicy"].(map[string]any); sp["type"] != "dangerFullAccess" || ts["approvalPolicy"] != "never" {
		t.Fatalf("turn/start params = %v", ts)
	}
}

func TestFakeRestartOfTuttidResumesOldThread(t *testing.T) {
	dir := t.TempDir()
	cfg := fakeConfig(t, dir, "normal")
	g1 := launchRig(t, dir, cfg)
	thread := g1.start(t, defaultSettings).ThreadID
	g1.turn(t, thread, "before", defaultSettings)
	if err := g1.rt.Close(); err != nil {
		t.Fatal(err)
	}
	g2 := launchRig(t, dir, cfg)
	if _, done := g2.turn(t, thread, "after", defaultSettings); done.Status != string(agent.TurnCompleted) {
		t.Fatalf("completion = %+v", done)
	}
	hist, err := g2.rt.History(ctxT(t), agent.HistoryInput{Provider: agent.ProviderCodex, ThreadID: thread})
	if err != nil || len(hist) != 2 {
		t.Fatalf("history = %v, %v", hist, err)
	}
}

func TestFakeArchiveToleratesGoneThread(t *testing.T) {
	g := startFake(t, "normal")
	thread := g.start(t, defaultSettings).ThreadID
	for i := 0; i < 2; i++ {
		if err := g.rt.Archive(ctxT(t), agent.ProviderCodex, thread); err != nil {
			t.Fatalf("Archive #%d: %v", i+1, err)
		}
	}
}

func TestMissingBinary(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "no-such-codex")
	rt := New(Config{Bin: bin, Logger: testLogger(t), RestartBackoffMin: time.Hour})
	err := rt.Launch(context.Background())
	if !errors.Is(err, agent.ErrRuntimeUnavailable) || !strings.Contains(err.Error(), bin) || !strings.Contains(err.Error(), "CODEX_BIN") {
		t.Fatalf("Launch = %v", err)
	}
	if err := rt.Health(context.Background()); !errors.Is(err, agent.ErrRuntimeUnavailable) || !strings.Contains(err.Error(), bin) {
		t.Fatalf("Health = %v", err)
	}
	if _, err := rt.Start(context.Background(), agent.StartInput{Provider: agent.ProviderCodex}); !errors.Is(err, agent.ErrRuntimeUnavailable) {
		t.Fatalf("Start = %v", err)
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok := <-rt.Events(); ok {
		t.Fatal("events not closed")
	}
}

func TestInputValidation(t *testing.T) {
	rt := New(Config{Logger: testLogger(t)})
	defer rt.Close()
	ctx := context.Background()
	bad := agent.ComposerSettings{PermissionModeID: "yolo"}
	badEffort := agent.ComposerSettings{ReasoningEffort: "max"}
	errs := []struct {
		name string
		err  error
		want error
	}{
		{"start provider", second(rt.Start(ctx, agent.StartInput{Provider: "claude"})), agent.ErrUnsupportedProvider},
		{"turn provider", second(rt.SendTurn(ctx, agent.SendTurnInput{Provider: "claude"})), agent.ErrUnsupportedProvider},
		{"fork provider", second(rt.Fork(ctx, agent.RuntimeForkInput{Provider: "claude"})), agent.ErrUnsupportedProvider},
		{"history provider", second(rt.History(ctx, agent.HistoryInput{Provider: "claude"})), agent.ErrUnsupportedProvider},
		{"interrupt provider", rt.Interrupt(ctx, agent.InterruptInput{Provider: "claude"}), agent.ErrUnsupportedProvider},
		{"archive provider", rt.Archive(ctx, "claude", "x"), agent.ErrUnsupportedProvider},
		{"start mode", second(rt.Start(ctx, agent.StartInput{Provider: "codex", Settings: bad})), agent.ErrInvalidSettings},
		{"turn effort", second(rt.SendTurn(ctx, agent.SendTurnInput{Provider: "codex", Settings: badEffort})), agent.ErrInvalidSettings},
		{"fork mode", second(rt.Fork(ctx, agent.RuntimeForkInput{Provider: "codex", Settings: bad})), agent.ErrInvalidSettings},
		{"not launched", second(rt.Start(ctx, agent.StartInput{Provider: "codex"})), agent.ErrRuntimeUnavailable},
	}
	for _, c := range errs {
		if !errors.Is(c.err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, c.err, c.want)
		}
	}
	if err := second(rt.Start(ctx, agent.StartInput{Provider: "claude"})); !strings.Contains(err.Error(), `"claude"`) {
		t.Errorf("unsupported provider error does not name it: %v", err)
	}
}

func second[T any](_ T, err error) error { return err }

func TestNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	func() {
		g := startFake(t, "approvals")
		thread := g.start(t, defaultSettings).ThreadID
		// The turn waits for a person when the process dies: the
		// goroutine holding the request must end too.
		if _, err := g.rt.SendTurn(ctxT(t), agent.SendTurnInput{Provider: agent.ProviderCodex, ThreadID: thread, Cwd: "/work", Settings: defaultSettings, Text: "x"}); err != nil {
			t.Fatal(err)
		}
		g.ev.Wait(t, wait, "approval request", func(e agent.Event) bool { return e.Kind == agent.EventApprovalRequested })
		killCurrent(t, g.rt)
		g.ev.Wait(t, wait, "approval cancelled", func(e agent.Event) bool {
			return e.Kind == agent.EventApprovalResolved && e.Resolution.Decision == agent.DecisionCancel && e.Resolution.By == "runtime_exit"
		})
		g.ev.Wait(t, wait, "restart", func(e agent.Event) bool { return e.Kind == agent.EventRuntimeRestarted })
		if err := g.rt.Close(); err != nil {
			t.Fatal(err)
		}
		g.ev.WaitClosed(t, wait)
	}()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			t.Fatalf("goroutines: %d before, %d after Close\n%s", before, runtime.NumGoroutine(), buf[:n])
		}
		time.Sleep(10 * time.Millisecond) // polling a condition, not a blind wait
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	if raw, ok := v.(json.RawMessage); ok {
		var x any
		if err := json.Unmarshal(raw, &x); err != nil {
			t.Fatalf("bad JSON %s: %v", raw, err)
		}
		v = x
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var _ = io.Discard

// forkHistory drains a fork's history stream: its turns, and whether the
// provider could vouch for them (no stream, or a stream that failed, means
// the service falls back to the parent's cache).
func forkHistory(t *testing.T, res agent.RuntimeForkResult) ([]agent.RuntimeTurn, bool) {
	t.Helper()
	if res.History == nil {
		return nil, false
	}
	turns, err := agent.ReadHistory(ctxT(t), res.History)
	if err != nil && !errors.Is(err, agent.ErrHistoryUnavailable) {
		t.Logf("history stream: %v", err)
	}
	return turns, err == nil
}

// slowReply is how late the fake answers a "slow:" method.
const slowReply = 4 * time.Second

// A thread/fork that times out at a live Codex: the runtime answers
// ErrRequestLost at its timeout, and hands the thread of the late reply to
// OnLateThread (issue 22, point 3).
func TestFakeForkLateReplySurfacesThread(t *testing.T) {
	// A bound with room for a busy machine's thread/start and turn/start;
	// the fork's reply comes well after it.
	g := startFake(t, "slow:thread/fork", func(c *Config) { c.RequestTimeout = time.Second })
	parent := g.start(t, defaultSettings)
	g.turn(t, parent.ThreadID, "hi", defaultSettings)
	late := make(chan string, 1)
	t0 := time.Now()
	_, err := g.rt.Fork(ctxT(t), agent.RuntimeForkInput{Provider: agent.ProviderCodex, ParentThreadID: parent.ThreadID,
		Cwd: "/work", Settings: defaultSettings, OnLateThread: func(id string) { late <- id }})
	if !errors.Is(err, agent.ErrRequestLost) {
		t.Fatalf("Fork = %v, want ErrRequestLost", err)
	}
	if d := time.Since(t0); d > slowReply {
		t.Errorf("Fork answered after %s, past its timeout", d)
	}
	select {
	case id := <-late:
		if id == "" || id == parent.ThreadID {
			t.Errorf("late thread %q", id)
		}
	case <-time.After(wait):
		t.Fatal("the late reply's thread never reached OnLateThread")
	}
}
