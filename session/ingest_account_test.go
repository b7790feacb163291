package session

import (
	"context"
	"strings"
	"testing"

	"tuttid/activity"
	"tuttid/agent"
	"tuttid/ent/turn"
	"tuttid/store/storetest"
)

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

// TestIngestAccountUpdated: an account change reaches every workspace,
// with the account and a failed login's reason; rate limits publish
// nothing.
func TestIngestAccountUpdated(t *testing.T) {
	t.Parallel()
	e, rec, _, _ := accountEnv(t)
	ctx := context.Background()
	e.st.Workspace(storetest.Workspace{ID: "w2"})
	acct := agent.Account{RequiresAuth: true}
	for _, ev := range []agent.Event{
		{Kind: agent.EventAccountUpdated, Account: &acct, LoginID: "login-1", Error: "login timed out"},
		{Kind: agent.EventRateLimits, RateLimits: &agent.RateLimits{}},
	} {
		if err := e.svc.HandleEvent(ctx, ev); err != nil {
			t.Fatalf("%s: %v", ev.Kind, err)
		}
	}
	evs := rec.Take()
	got := map[string]bool{}
	for _, ev := range evs {
		if ev.Kind != activity.AccountUpdated || ev.Account == nil || *ev.Account != acct || ev.Error != "login timed out" ||
			ev.AgentSessionID != "" {
			t.Errorf("published %+v", ev)
		}
		got[ev.WorkspaceID] = true
	}
	if len(evs) != 2 || !got["w"] || !got["w2"] {
		t.Errorf("ACCOUNT_UPDATED went to %v, want w and w2 once each", got)
	}
}

// TestCancelledLoginIsNoFailure: the completion Codex sends for a login
// the person cancelled through tuttid ("Login was not completed") is
// published without an error (it reopened the sign-in dialog with one,
// after the person had closed it, when Codex was slow); another login's
// failure keeps its error.
func TestCancelledLoginIsNoFailure(t *testing.T) {
	t.Parallel()
	e, rec, _, _ := accountEnv(t)
	ctx := context.Background()
	d, err := e.svc.StartLogin(ctx, agent.LoginInput{Method: agent.LoginDeviceCode})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.svc.CancelLogin(ctx, d.LoginID); err != nil {
		t.Fatal(err)
	}
	acct := agent.Account{RequiresAuth: true}
	for _, ev := range []agent.Event{
		{Kind: agent.EventAccountUpdated, Account: &acct, LoginID: d.LoginID, Error: "Login was not completed"},
		{Kind: agent.EventAccountUpdated, Account: &acct, LoginID: "other-login", Error: "denied"},
		// The same id again is not a cancel any more: remembered once.
		{Kind: agent.EventAccountUpdated, Account: &acct, LoginID: d.LoginID, Error: "Login was not completed"},
	} {
		if err := e.svc.HandleEvent(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	var errs []string
	for _, ev := range rec.Take() {
		errs = append(errs, ev.Error)
	}
	if want := []string{"", "denied", "Login was not completed"}; strings.Join(errs, "|") != strings.Join(want, "|") {
		t.Errorf("published errors %q, want %q", errs, want)
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
