package graph_test

import (
	"testing"
	"time"

	"github.com/99designs/gqlgen/client"

	"tuttid/agent"
	"tuttid/agent/agenttest"
	"tuttid/ent/turn"
	"tuttid/store/storetest"
)

// TestCodexAccountOperations: codexAccount, the three logins, cancel and
// logout reach the runtime and answer the contract's shapes; while signed
// out, startSession and sendMessage are agent.provider_not_signed_in.
func TestCodexAccountOperations(t *testing.T) {
	t.Parallel()
	rt := agenttest.New()
	rt.SetAccount(agent.Account{RequiresAuth: true})
	e := newEnv(t, rt)
	e.db.Workspace(storetest.Workspace{ID: "w", RootPath: t.TempDir()})
	e.db.Session(storetest.Session{ID: "s1", Workspace: "w"})

	type account struct {
		SignedIn, RequiresOpenaiAuth bool
		AuthMode, Email, PlanType    *string
	}
	var acc struct{ CodexAccount account }
	e.post(`{ codexAccount { signedIn requiresOpenaiAuth authMode email planType } }`, &acc)
	if a := acc.CodexAccount; a.SignedIn || !a.RequiresOpenaiAuth || a.AuthMode != nil || a.Email != nil {
		t.Errorf("codexAccount = %+v", a)
	}
	if code := e.postErr(`mutation { startSession(input: {workspaceId: "w"}) { id } }`); code != "agent.provider_not_signed_in" {
		t.Errorf("startSession signed out: %s", code)
	}
	if code := e.postErr(`mutation { sendMessage(input: {workspaceId: "w", agentSessionId: "s1", text: "hi"}) { id } }`); code != "agent.provider_not_signed_in" {
		t.Errorf("sendMessage signed out: %s", code)
	}

	type login struct {
		LoginID, AuthURL, VerificationURL, UserCode *string
		Account                                     *account
	}
	const loginQ = `mutation($in: StartCodexLoginInput!) { startCodexLogin(input: $in) {
		loginId authUrl verificationUrl userCode account { signedIn authMode } } }`
	var chat struct{ StartCodexLogin login }
	e.post(loginQ, &chat, client.Var("in", map[string]any{"method": "CHATGPT"}))
	if l := chat.StartCodexLogin; l.LoginID == nil || l.AuthURL == nil || l.Account != nil {
		t.Errorf("CHATGPT login = %+v", l)
	}
	var dev struct{ StartCodexLogin login }
	e.post(loginQ, &dev, client.Var("in", map[string]any{"method": "DEVICE_CODE"}))
	if l := dev.StartCodexLogin; l.LoginID == nil || l.VerificationURL == nil || l.UserCode == nil {
		t.Errorf("DEVICE_CODE login = %+v", l)
	}
	var cancel struct{ CancelCodexLogin bool }
	e.post(`mutation($id: ID!) { cancelCodexLogin(loginId: $id) }`, &cancel, client.Var("id", *chat.StartCodexLogin.LoginID))
	if !cancel.CancelCodexLogin || len(rt.CanceledLogins()) != 1 {
		t.Errorf("cancel = %v, runtime %v", cancel, rt.CanceledLogins())
	}
	if code := e.postErr(loginQ, client.Var("in", map[string]any{"method": "API_KEY"})); code != "invalid_input" {
		t.Errorf("API_KEY login without a key: %s", code)
	}
	var key struct{ StartCodexLogin login }
	e.post(loginQ, &key, client.Var("in", map[string]any{"method": "API_KEY", "apiKey": "sk-graph-test"}))
	if l := key.StartCodexLogin; l.Account == nil || !l.Account.SignedIn || l.LoginID != nil {
		t.Errorf("API_KEY login = %+v", l)
	}
	var started struct{ StartSession struct{ ID string } }
	e.post(`mutation { startSession(input: {workspaceId: "w"}) { id } }`, &started)
	var out struct{ LogoutCodex account }
	e.post(`mutation { logoutCodex { signedIn requiresOpenaiAuth } }`, &out)
	if out.LogoutCodex.SignedIn {
		t.Errorf("logout = %+v", out.LogoutCodex)
	}
}

// TestModelsRateLimitsAndUsage: models and rateLimits from the runtime;
// a session's tokenUsage and a turn's error and errorCode from the store.
func TestModelsRateLimitsAndUsage(t *testing.T) {
	t.Parallel()
	rt := agenttest.New()
	reset := time.Date(2026, 12, 4, 20, 0, 0, 0, time.UTC)
	rt.SetRateLimits(&agent.RateLimits{Primary: &agent.RateLimitWindow{UsedPercent: 42.5, WindowMinutes: 300, ResetsAt: reset},
		UpdatedAt: reset.Add(-time.Hour)})
	e := newEnv(t, rt)
	e.db.Workspace(storetest.Workspace{ID: "w"})
	e.db.Session(storetest.Session{ID: "s1", Workspace: "w", Turns: []storetest.Turn{{ID: "t1", Status: turn.StatusFAILED, Error: "bad key"}}})
	e.db.Client.Turn.Update().SetErrorCode("unauthorized").ExecX(e.ctx)
	e.db.Client.AgentSession.UpdateOneID("s1").SetTokenUsage(&agent.TokenUsage{TotalTokens: 10, InputTokens: 7, OutputTokens: 3,
		LastTurnTotalTokens: 10, ContextWindow: 1000}).ExecX(e.ctx)
	e.db.Session(storetest.Session{ID: "s2", Workspace: "w"})

	var res struct {
		Models []struct {
			ID, Model, DisplayName string
			IsDefault              bool
			ReasoningEfforts       []string
			DefaultReasoningEffort *string
		}
		RateLimits *struct {
			Primary *struct {
				UsedPercent   float64
				WindowMinutes *int
				ResetsAt      *string
			}
			Secondary *struct{ UsedPercent float64 }
			UpdatedAt string
		}
		S1, S2 struct {
			TokenUsage *struct {
				TotalTokens, InputTokens, OutputTokens, LastTurnTotalTokens int64
				ContextWindow                                               *int64
			}
			Turns []struct {
				Error, ErrorCode *string
			}
		}
	}
	e.post(`{ models { id model displayName isDefault reasoningEfforts defaultReasoningEffort }
		rateLimits { primary { usedPercent windowMinutes resetsAt } secondary { usedPercent } updatedAt }
		s1: session(workspaceId: "w", id: "s1") { tokenUsage { totalTokens inputTokens outputTokens lastTurnTotalTokens contextWindow } turns { error errorCode } }
		s2: session(workspaceId: "w", id: "s2") { tokenUsage { totalTokens } turns { error errorCode } } }`, &res)
	if len(res.Models) != 2 || res.Models[0].Model != "gpt-test" || !res.Models[0].IsDefault ||
		len(res.Models[1].ReasoningEfforts) != 2 || res.Models[0].DefaultReasoningEffort == nil {
		t.Errorf("models = %+v", res.Models)
	}
	if l := res.RateLimits; l == nil || l.Primary == nil || l.Primary.UsedPercent != 42.5 || l.Primary.WindowMinutes == nil ||
		*l.Primary.WindowMinutes != 300 || l.Primary.ResetsAt == nil || *l.Primary.ResetsAt != reset.Format(time.RFC3339) || l.Secondary != nil {
		t.Errorf("rateLimits = %+v", l)
	}
	if u := res.S1.TokenUsage; u == nil || u.TotalTokens != 10 || u.ContextWindow == nil || *u.ContextWindow != 1000 {
		t.Errorf("tokenUsage = %+v", u)
	}
	if tr := res.S1.Turns; len(tr) != 1 || tr[0].ErrorCode == nil || *tr[0].ErrorCode != "unauthorized" {
		t.Errorf("turns = %+v", tr)
	}
	if res.S2.TokenUsage != nil {
		t.Errorf("tokenUsage before any report = %+v, want null", res.S2.TokenUsage)
	}
	rt.SetRateLimits(nil)
	var none struct{ RateLimits *struct{ UpdatedAt string } }
	e.post(`{ rateLimits { updatedAt } }`, &none)
	if none.RateLimits != nil {
		t.Errorf("rateLimits without a report = %+v, want null", none.RateLimits)
	}
}

// TestSteerTurnMutation: steerTurn reaches the runtime for the running
// turn; a finished one is agent.turn_not_running.
func TestSteerTurnMutation(t *testing.T) {
	t.Parallel()
	rt := agenttest.New()
	e := newEnv(t, rt)
	e.db.Workspace(storetest.Workspace{ID: "w"})
	e.db.Session(storetest.Session{ID: "s1", Workspace: "w", Thread: "thread-1",
		Turns: []storetest.Turn{{ID: "t1"}, {ID: "t2", Status: turn.StatusIN_PROGRESS}}})
	const q = `mutation($t: ID!) { steerTurn(input: {workspaceId: "w", agentSessionId: "s1", turnId: $t, text: "and add tests"}) { id status } }`
	var res struct{ SteerTurn struct{ ID, Status string } }
	e.post(q, &res, client.Var("t", "t2"))
	if res.SteerTurn.ID != "t2" || res.SteerTurn.Status != "IN_PROGRESS" {
		t.Errorf("steerTurn = %+v", res.SteerTurn)
	}
	if s := rt.Steers(); len(s) != 1 || s[0].Text != "and add tests" || s[0].ThreadID != "thread-1" {
		t.Errorf("runtime steers %+v", s)
	}
	if code := e.postErr(q, client.Var("t", "t1")); code != "agent.turn_not_running" {
		t.Errorf("steer a finished turn: %s", code)
	}
}

// TestForkNotSignedIn: while Codex is not signed in, forkSession fails at
// once with agent.provider_not_signed_in: no journal entry, no call to
// the provider, no child.
func TestForkNotSignedIn(t *testing.T) {
	t.Parallel()
	rt := agenttest.New()
	rt.SetAccount(agent.Account{RequiresAuth: true})
	e := newEnv(t, rt)
	e.db.Workspace(storetest.Workspace{ID: "w"})
	e.db.Session(storetest.Session{ID: "s1", Workspace: "w", Turns: []storetest.Turn{{ID: "t1"}}})
	code := e.postErr(`mutation { forkSession(input: {workspaceId: "w", agentSessionId: "s1", requestId: "r1"}) { session { id } } }`)
	if code != "agent.provider_not_signed_in" {
		t.Errorf("forkSession not signed in: %s", code)
	}
	if n := e.db.Client.ForkJournal.Query().CountX(e.ctx); n != 0 {
		t.Errorf("%d journal entries after a refused fork, want 0", n)
	}
	if n := e.db.Client.AgentSession.Query().CountX(e.ctx); n != 1 {
		t.Errorf("%d sessions after a refused fork, want 1", n)
	}
	if n := len(rt.ForkInputs()); n != 0 {
		t.Errorf("the provider was asked to fork %d times", n)
	}
	// A bad effort for a listed model is invalid_input, naming the efforts.
	rt.SetAccount(agent.Account{SignedIn: true})
	code = e.postErr(`mutation { forkSession(input: {workspaceId: "w", agentSessionId: "s1", requestId: "r2",
		settings: {model: "gpt-test-mini", reasoningEffort: "xhigh"}}) { session { id } } }`)
	if code != "invalid_input" {
		t.Errorf("fork with an effort the model lacks: %s", code)
	}
}
