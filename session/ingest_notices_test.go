package session

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"tuttid/activity"
	"tuttid/activity/activitytest"
	"tuttid/agent"
	"tuttid/agent/agenttest"
	"tuttid/ent/turn"
	"tuttid/store/storetest"
)

// accountEnv is a Service over agenttest's runtime, which has accounts
// and steering, with its activity and log recorded.
func accountEnv(t *testing.T) (*testEnv, *activitytest.Recorder, *agenttest.Runtime, *bytes.Buffer) {
	t.Helper()
	e := newTestEnv(t)
	rec, rt, logs := &activitytest.Recorder{}, agenttest.New(), &bytes.Buffer{}
	e.svc = New(Config{Store: e.st.Store, Publisher: rec, Runtime: rt,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	e.st.Workspace(storetest.Workspace{ID: "w", RootPath: t.TempDir()})
	e.st.Session(storetest.Session{ID: "s1", Workspace: "w", Thread: "thread-1",
		Turns: []storetest.Turn{{ID: "done"}, {ID: "running", Status: turn.StatusIN_PROGRESS}}})
	return e, rec, rt, logs
}

// TestIngestTurnHealth: a retry is published on the running turn with
// Codex's message; a failed turn keeps Codex's message and kind; refused
// credentials are errorCode "unauthorized".
func TestIngestTurnHealth(t *testing.T) {
	t.Parallel()
	e, rec, _, logs := accountEnv(t)
	ctx := context.Background()
	handle := func(ev agent.Event) {
		t.Helper()
		ev.Provider, ev.ThreadID = agent.ProviderCodex, "thread-1"
		if err := e.svc.HandleEvent(ctx, ev); err != nil {
			t.Fatalf("%s: %v", ev.Kind, err)
		}
	}
	handle(agent.Event{Kind: agent.EventTurnRetrying, TurnID: "running",
		Failure: &agent.TurnFailure{Message: "Reconnecting... 2/5", Code: "responseStreamDisconnected"}})
	evs := rec.Take()
	if len(evs) != 1 || evs[0].Kind != activity.TurnRetrying || evs[0].Turn == nil || evs[0].Turn.TurnID != "running" ||
		evs[0].Error != "Reconnecting... 2/5" || evs[0].AgentSessionID != "s1" {
		t.Fatalf("retry published %+v", evs)
	}
	handle(agent.Event{Kind: agent.EventTurnCompleted, TurnID: "running", Status: string(agent.TurnFailed),
		Error: "unexpected status 401 Unauthorized", Failure: &agent.TurnFailure{Message: "unexpected status 401 Unauthorized",
			Code: agent.ErrorUnauthorized, HTTPStatus: 401}})
	tr, err := e.st.Client.Turn.Query().Where(turn.TurnID("running")).Only(ctx)
	if err != nil || tr.Status != turn.StatusFAILED || tr.ErrorCode != agent.ErrorUnauthorized ||
		tr.Error != "unexpected status 401 Unauthorized" {
		t.Fatalf("failed turn = %+v, %v", tr, err)
	}
	if !containsAll(logs.String(), "provider retrying a model request", "Reconnecting... 2/5", "turn failed", "unauthorized") {
		t.Errorf("log lacks the retry and the failure:\n%s", logs.String())
	}
}

// TestIngestTokenUsage: usage is stored on the session (read back from
// the database, as after a restart) and published with it.
func TestIngestTokenUsage(t *testing.T) {
	t.Parallel()
	e, rec, _, _ := accountEnv(t)
	ctx := context.Background()
	u := agent.TokenUsage{TotalTokens: 1200, InputTokens: 1000, CachedInputTokens: 200, OutputTokens: 200,
		ReasoningOutputTokens: 50, LastTurnTotalTokens: 1200, ContextWindow: 272000}
	if err := e.svc.HandleEvent(ctx, agent.Event{Kind: agent.EventTokenUsage, ThreadID: "thread-1", TokenUsage: &u}); err != nil {
		t.Fatal(err)
	}
	evs := rec.Take()
	if len(evs) != 1 || evs[0].Kind != activity.TokenUsageUpdated || evs[0].Session == nil ||
		evs[0].Session.TokenUsage == nil || *evs[0].Session.TokenUsage != u {
		t.Fatalf("published %+v", evs)
	}
	a, err := e.st.Client.AgentSession.Get(ctx, "s1")
	if err != nil || a.TokenUsage == nil || *a.TokenUsage != u {
		t.Fatalf("stored usage = %+v, %v", a.TokenUsage, err)
	}
}

// TestIngestWarning: a warning about a session's thread reaches that
// session's subscribers; one about no known thread (configuration,
// deprecation) reaches every workspace; both with Codex's text and kind.
func TestIngestWarning(t *testing.T) {
	t.Parallel()
	e, rec, _, logs := accountEnv(t)
	ctx := context.Background()
	e.st.Workspace(storetest.Workspace{ID: "w2"})
	for _, ev := range []agent.Event{
		{Kind: agent.EventWarning, Method: "configWarning", Notice: "unknown key foo in config.toml"},
		{Kind: agent.EventWarning, Method: "warning", Notice: "model is slow today", ThreadID: "thread-1"},
		{Kind: agent.EventWarning, Method: "deprecationNotice", Notice: "old flag", ThreadID: "unknown-thread"},
	} {
		if err := e.svc.HandleEvent(ctx, ev); err != nil {
			t.Fatalf("%s: %v", ev.Kind, err)
		}
	}
	type key struct{ ws, session, kind, text string }
	got := map[key]int{}
	for _, ev := range rec.Take() {
		if ev.Kind != activity.ProviderWarning {
			t.Errorf("published %+v", ev)
		}
		got[key{ev.WorkspaceID, ev.AgentSessionID, ev.NoticeKind, ev.Notice}]++
	}
	want := map[key]int{
		{"w", "", "configWarning", "unknown key foo in config.toml"}:  1,
		{"w2", "", "configWarning", "unknown key foo in config.toml"}: 1,
		{"w", "s1", "warning", "model is slow today"}:                 1,
		{"w", "", "deprecationNotice", "old flag"}:                    1,
		{"w2", "", "deprecationNotice", "old flag"}:                   1,
	}
	if len(got) != len(want) {
		t.Errorf("warnings published %v, want %v", got, want)
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("warning %+v published %d times, want %d (all: %v)", k, got[k], n, got)
		}
	}
	if !containsAll(logs.String(), "provider warning", "unknown key foo in config.toml", "configWarning") {
		t.Errorf("warning not logged with its text:\n%s", logs.String())
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
