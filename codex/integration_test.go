package codex_test

// Tests against the real `codex app-server` (codextest.Binary skips them
// when it is not installed, and fails them under CI), offline, with
// codextest's fake model server behind it.

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"tuttid/agent"
	"tuttid/codex"
	"tuttid/codex/codextest"
)

const realWait = 30 * time.Second

type realRig struct {
	rt    *codex.Runtime
	ev    *codex.EventRecorder
	model *codextest.ModelServer
}

func realConfig(t *testing.T, home string) codex.Config {
	return codex.Config{
		Bin:            codextest.Binary(t),
		Env:            append(os.Environ(), "CODEX_HOME="+home),
		Logger:         slog.New(slog.NewTextHandler(testLog{t}, &slog.HandlerOptions{Level: slog.LevelInfo})),
		ClientVersion:  "test",
		RequestTimeout: realWait,
	}
}

// launch starts a Runtime; it is closed before the codex home is removed.
func launch(t *testing.T, cfg codex.Config) (*codex.Runtime, *codex.EventRecorder) {
	t.Helper()
	rt := codex.New(cfg)
	ev := codex.RecordEvents(rt.Events())
	t.Cleanup(func() { _ = rt.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), realWait)
	defer cancel()
	if err := rt.Launch(ctx); err != nil {
		t.Fatalf("Launch: %v", err)
	}
	return rt, ev
}

func newRealRig(t *testing.T, tweak func(*codex.Config)) (*realRig, string) {
	t.Helper()
	model := codextest.StartModelServer(t)
	home := codextest.NewCodexHome(t, model.URL())
	cfg := realConfig(t, home)
	if tweak != nil {
		tweak(&cfg)
	}
	rt, ev := launch(t, cfg)
	return &realRig{rt: rt, ev: ev, model: model}, home
}

type testLog struct{ t *testing.T }

func (w testLog) Write(p []byte) (int, error) {
	defer func() { _ = recover() }()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func rctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), realWait)
	t.Cleanup(cancel)
	return ctx
}

var readOnly = agent.ComposerSettings{PermissionModeID: agent.PermissionReadOnly}

func (g *realRig) start(t *testing.T, s agent.ComposerSettings) string {
	t.Helper()
	sess, err := g.rt.Start(rctx(t), agent.StartInput{Provider: agent.ProviderCodex, Cwd: t.TempDir(), Settings: s})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	if sess.ThreadID == "" || sess.Model != "mock-model" || sess.ModelProvider != "mock" {
		t.Fatalf("session = %+v", sess)
	}
	return sess.ThreadID
}

func (g *realRig) send(t *testing.T, thread, text string, s agent.ComposerSettings) agent.RuntimeTurn {
	t.Helper()
	turn, err := g.rt.SendTurn(rctx(t), agent.SendTurnInput{Provider: agent.ProviderCodex, ThreadID: thread, Settings: s, Text: text})
	if err != nil {
		t.Fatalf("SendTurn(%q): %v", text, err)
	}
	if turn.ID == "" || turn.Status != agent.TurnInProgress {
		t.Fatalf("turn = %+v", turn)
	}
	return turn
}

// turn sends text and waits for the turn to complete successfully.
func (g *realRig) turn(t *testing.T, thread, text string, s agent.ComposerSettings) agent.RuntimeTurn {
	t.Helper()
	turn := g.send(t, thread, text, s)
	done := g.ev.Wait(t, realWait, "completion of "+text, codex.TurnDone(turn.ID))
	if done.Status != string(agent.TurnCompleted) || done.ThreadID != thread {
		t.Fatalf("completion of %q = %+v", text, done)
	}
	return turn
}

// lastUserTexts is what the thread's latest model request carried.
func (g *realRig) lastUserTexts(t *testing.T, thread string) []string {
	t.Helper()
	reqs := g.model.RequestsFor(thread)
	if len(reqs) == 0 {
		t.Fatalf("no model request for thread %s", thread)
	}
	return reqs[len(reqs)-1].UserTexts()
}

func wantTexts(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s: user texts %q, want %q", what, got, want)
	}
}

func turnIDs(ts []agent.RuntimeTurn) []string {
	var ids []string
	for _, t := range ts {
		ids = append(ids, t.ID)
	}
	return ids
}

func TestCodexTurnsHistoryForkInterrupt(t *testing.T) {
	g, _ := newRealRig(t, nil)
	parent := g.start(t, readOnly)

	// Two turns: both complete, the reply streams as deltas, and the second
	// model request carries the first turn (the thread's history).
	t1 := g.turn(t, parent, "first question", readOnly)
	asst := g.ev.Wait(t, realWait, "assistant item", func(e agent.Event) bool {
		return e.Kind == agent.EventItemCompleted && e.TurnID == t1.ID && e.Message.Role == "assistant"
	})
	if asst.Message.Text != "reply: first question" || asst.Message.Kind != "agentMessage" || asst.Message.Status != "completed" {
		t.Fatalf("assistant message = %+v", asst.Message)
	}
	var streamed string
	for _, e := range g.ev.Events() {
		if e.Kind == agent.EventMessageDelta && e.ItemID == asst.Message.ID {
			streamed += e.Delta
		}
	}
	if streamed != asst.Message.Text {
		t.Fatalf("deltas %q != message %q", streamed, asst.Message.Text)
	}
	t2 := g.turn(t, parent, "second question", readOnly)
	wantTexts(t, "parent turn 2", g.lastUserTexts(t, parent), "first question", "second question")

	hist, err := g.rt.History(rctx(t), agent.HistoryInput{Provider: agent.ProviderCodex, ThreadID: parent})
	if err != nil {
		t.Fatalf("History: %v", err)
	}
	if !slices.Equal(turnIDs(hist), []string{t1.ID, t2.ID}) {
		t.Fatalf("history turns %v, want %v", turnIDs(hist), []string{t1.ID, t2.ID})
	}
	var roles, texts []string
	for _, m := range hist[0].Messages {
		roles, texts = append(roles, m.Role), append(texts, m.Text)
	}
	if !slices.Equal(roles, []string{"user", "assistant"}) || !slices.Equal(texts, []string{"first question", "reply: first question"}) || hist[0].Status != agent.TurnCompleted {
		t.Fatalf("turn 1 = %v %q %s", roles, texts, hist[0].Status)
	}

	fork := func(last string) (agent.RuntimeForkResult, []agent.RuntimeTurn) {
		t.Helper()
		res, err := g.rt.Fork(rctx(t), agent.RuntimeForkInput{
			Provider: agent.ProviderCodex, ParentThreadID: parent, LastTurnID: last, Settings: readOnly,
		})
		if err != nil {
			t.Fatalf("Fork(%q): %v", last, err)
		}
		if c := res.Session.ThreadID; c == "" || c == parent || res.Session.ForkedFromID != parent || res.Fork.ChildThreadID != c {
			t.Fatalf("fork session %+v lineage %+v", res.Session, res.Fork)
		}
		if res.History == nil {
			t.Fatal("fork without history")
		}
		turns, err := agent.ReadHistory(rctx(t), res.History)
		if err != nil {
			t.Fatalf("fork's history: %v", err)
		}
		return res, turns
	}

	_, whole := fork("")
	if !slices.Equal(turnIDs(whole), []string{t1.ID, t2.ID}) {
		t.Fatalf("whole fork turns %v", turnIDs(whole))
	}

	// Fork through turn 1 of 2: the child's next turn sends turn 1's text
	// and not turn 2's; the parent still carries both.
	partialRes, partial := fork(t1.ID)
	child := partialRes.Session.ThreadID
	if !slices.Equal(turnIDs(partial), []string{t1.ID}) || partial[0].Messages[0].Text != "first question" {
		t.Fatalf("partial fork turns %v", turnIDs(partial))
	}
	g.turn(t, child, "child question", readOnly)
	wantTexts(t, "child", g.lastUserTexts(t, child), "first question", "child question")
	g.turn(t, parent, "third question", readOnly)
	wantTexts(t, "parent turn 3", g.lastUserTexts(t, parent), "first question", "second question", "third question")
	childHist, err := g.rt.History(rctx(t), agent.HistoryInput{Provider: agent.ProviderCodex, ThreadID: child})
	if err != nil || len(childHist) != 2 || childHist[0].ID != t1.ID {
		t.Fatalf("child history %v, %v", turnIDs(childHist), err)
	}

	// A bad lastTurnId is Codex's "turn not found".
	_, err = g.rt.Fork(rctx(t), agent.RuntimeForkInput{Provider: agent.ProviderCodex, ParentThreadID: parent, LastTurnID: "01a00000-0000-7000-8000-000000000000", Settings: readOnly})
	var pe *agent.ProviderError
	if !errors.Is(err, agent.ErrTurnNotFound) || !errors.Is(err, agent.ErrProviderFailed) || !errors.As(err, &pe) || pe.Method != "thread/fork" {
		t.Fatalf("fork with a bad lastTurnId: %v", err)
	}

	// Interrupt a slow reply.
	g.model.SetReply(func(r codextest.Request) codextest.Reply {
		if r.LastUserText() == "slow question" {
			return codextest.Reply{Text: "never finished", Delay: time.Minute}
		}
		return codextest.DefaultReply(r)
	})
	slow := g.send(t, parent, "slow question", readOnly)
	g.ev.Wait(t, realWait, "first delta of the slow reply", func(e agent.Event) bool {
		return e.Kind == agent.EventMessageDelta && e.TurnID == slow.ID
	})
	if err := g.rt.Interrupt(rctx(t), agent.InterruptInput{Provider: agent.ProviderCodex, ThreadID: parent, TurnID: slow.ID}); err != nil {
		t.Fatalf("Interrupt: %v", err)
	}
	if done := g.ev.Wait(t, realWait, "interrupted turn", codex.TurnDone(slow.ID)); done.Status != string(agent.TurnInterrupted) {
		t.Fatalf("slow turn = %+v", done)
	}

	// Archive, twice: the second finds the thread gone and is fine with it.
	for i := 0; i < 2; i++ {
		if err := g.rt.Archive(rctx(t), agent.ProviderCodex, child); err != nil {
			t.Fatalf("Archive #%d: %v", i+1, err)
		}
	}
}

func TestCodexRestartAndCrashResume(t *testing.T) {
	g, home := newRealRig(t, nil)
	thread := g.start(t, readOnly)
	g.turn(t, thread, "alpha", readOnly)
	if err := g.rt.Close(); err != nil {
		t.Fatal(err)
	}

	// A new runtime (tuttid restarted) on the same CODEX_HOME: history reads
	// from disk, and the next turn resumes the thread first.
	rt2, ev2 := launch(t, realConfig(t, home))
	g.rt, g.ev = rt2, ev2
	hist, err := rt2.History(rctx(t), agent.HistoryInput{Provider: agent.ProviderCodex, ThreadID: thread})
	if err != nil || len(hist) != 1 {
		t.Fatalf("history after restart: %v, %v", turnIDs(hist), err)
	}
	g.turn(t, thread, "beta", readOnly)
	wantTexts(t, "after restart", g.lastUserTexts(t, thread), "alpha", "beta")

	// The app-server dies mid-turn: the turn is reported failed, the
	// process restarts, and the thread works again after a resume.
	g.model.SetReply(func(r codextest.Request) codextest.Reply {
		if r.LastUserText() == "gamma" {
			return codextest.Reply{Text: "cut short", Delay: time.Minute}
		}
		return codextest.DefaultReply(r)
	})
	gamma := g.send(t, thread, "gamma", readOnly)
	g.ev.Wait(t, realWait, "gamma delta", func(e agent.Event) bool { return e.Kind == agent.EventMessageDelta && e.TurnID == gamma.ID })
	if err := codex.KillAppServer(rt2); err != nil {
		t.Fatal(err)
	}
	failed := g.ev.Wait(t, realWait, "failed gamma", codex.TurnDone(gamma.ID))
	if failed.Status != string(agent.TurnFailed) || failed.Error == "" {
		t.Fatalf("gamma = %+v", failed)
	}
	g.ev.Wait(t, realWait, "restart", func(e agent.Event) bool { return e.Kind == agent.EventRuntimeRestarted })
	g.turn(t, thread, "delta", readOnly)
	got := g.lastUserTexts(t, thread)
	if len(got) < 3 || got[0] != "alpha" || got[1] != "beta" || got[len(got)-1] != "delta" {
		t.Fatalf("after crash: user texts %q", got)
	}
}

func TestCodexSettingsReachTheModel(t *testing.T) {
	g, _ := newRealRig(t, func(c *codex.Config) { c.ExperimentalPlanMode = true })
	s := agent.ComposerSettings{PermissionModeID: agent.PermissionReadOnly, BrowserUse: true, PlanMode: true, ReasoningEffort: "high"}
	thread := g.start(t, s)
	g.turn(t, thread, "make a plan", s)
	reqs := g.model.RequestsFor(thread)
	body := reqs[len(reqs)-1].Body
	var req struct {
		Tools []struct {
			Type string `json:"type"`
			Name string `json:"name"`
		} `json:"tools"`
		Reasoning struct {
			Effort string `json:"effort"`
		} `json:"reasoning"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	hasWebSearch := slices.ContainsFunc(req.Tools, func(x struct {
		Type string `json:"type"`
		Name string `json:"name"`
	}) bool {
		return x.Type == "web_search" || x.Name == "web_search"
	})
	if !hasWebSearch {
		t.Errorf("browserUse: no web_search tool in %s", body[:min(len(body), 300)])
	}
	if req.Reasoning.Effort != "high" {
		t.Errorf("reasoning effort = %q", req.Reasoning.Effort)
	}
	if !strings.Contains(string(body), "Plan Mode") {
		t.Error("planMode: no Plan Mode collaboration instructions in the model request")
	}

	off := agent.ComposerSettings{PermissionModeID: agent.PermissionReadOnly}
	thread2 := g.start(t, off)
	g.turn(t, thread2, "no plan", off)
	reqs = g.model.RequestsFor(thread2)
	body = reqs[len(reqs)-1].Body
	if strings.Contains(string(body), `"web_search"`) || strings.Contains(string(body), "Plan Mode") {
		t.Error("web search or plan mode without browserUse/planMode")
	}
}
