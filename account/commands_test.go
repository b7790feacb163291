package account

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"tuttid/activity/activitytest"
	"tuttid/agent"
	"tuttid/agent/agenttest"
	"tuttid/apperr"
	"tuttid/ent/agentsession"
	"tuttid/ent/turn"
	"tuttid/session"
	"tuttid/store/storetest"
)

// testEnv is an account Service and a session Service asking it, over
// agenttest's runtime (which has accounts), with the activity and log
// recorded.
type testEnv struct {
	st       *storetest.Store
	svc      *Service
	sessions *session.Service
}

func accountEnv(t *testing.T) (*testEnv, *activitytest.Recorder, *agenttest.Runtime, *bytes.Buffer) {
	t.Helper()
	st := storetest.New(t)
	rec, rt, logs := &activitytest.Recorder{}, agenttest.New(), &bytes.Buffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e := &testEnv{st: st, svc: New(Config{Runtime: rt, Logger: log})}
	e.sessions = session.New(session.Config{Store: st.Store, Publisher: rec, Runtime: rt, Logger: log, Accounts: e.svc})
	e.st.Workspace(storetest.Workspace{ID: "w", RootPath: t.TempDir()})
	e.st.Session(storetest.Session{ID: "s1", Workspace: "w", Thread: "thread-1",
		Turns: []storetest.Turn{{ID: "done"}, {ID: "running", Status: turn.StatusIN_PROGRESS}}})
	return e, rec, rt, logs
}

func strp(v string) *string { return &v }

// TestNotSignedInRefusesAtOnce: while Codex is not signed in, starting a
// session and sending a message fail with agent.provider_not_signed_in,
// saying how to sign in, and leave nothing behind (no thread, no turn,
// the session not claimed).
func TestNotSignedInRefusesAtOnce(t *testing.T) {
	t.Parallel()
	e, _, rt, _ := accountEnv(t)
	ctx := context.Background()
	rt.SetAccount(agent.Account{RequiresAuth: true})
	_, err := e.sessions.Start(ctx, session.StartInput{WorkspaceID: "w"})
	checkNotSignedIn(t, "start", err)
	_, err = e.sessions.Send(ctx, "w", "s1", "say hi")
	checkNotSignedIn(t, "send", err)
	a, gerr := e.st.Client.AgentSession.Get(ctx, "s1")
	if gerr != nil || a.Status != agentsession.StatusREADY {
		t.Errorf("session after a refused send = %+v, %v; want READY", a, gerr)
	}
	if n := e.st.Client.AgentSession.Query().CountX(ctx); n != 1 {
		t.Errorf("%d sessions after a refused start, want 1", n)
	}
	// Refused credentials say so.
	rt.SetAccount(agent.Account{RequiresAuth: true, AuthMode: "apiKey", CredentialsRefused: true})
	_, err = e.sessions.Send(ctx, "w", "s1", "say hi")
	checkNotSignedIn(t, "send after refused credentials", err)
	if !strings.Contains(apperr.From(err).Message, "refused or have expired") {
		t.Errorf("send after refused credentials = %v; want it to say they were refused", err)
	}
	// Signed in again: the start goes through.
	rt.SetAccount(agent.Account{SignedIn: true, RequiresAuth: true, AuthMode: "apiKey"})
	if _, err := e.sessions.Start(ctx, session.StartInput{WorkspaceID: "w"}); err != nil {
		t.Errorf("start once signed in: %v", err)
	}
}

func checkNotSignedIn(t *testing.T, what string, err error) {
	t.Helper()
	ae := apperr.From(err)
	if ae.Code != apperr.ProviderNotSignedIn || !strings.Contains(ae.Message, "startCodexLogin") ||
		!strings.Contains(ae.Message, "Sign in to Codex") {
		t.Errorf("%s while not signed in = %v; want %s saying how to sign in", what, err, apperr.ProviderNotSignedIn)
	}
	if ae.Code.HTTPStatus() != 409 {
		t.Errorf("HTTP status of %s = %d, want 409", ae.Code, ae.Code.HTTPStatus())
	}
}

// TestCheckModelSettings: a listed model's effort must be one it supports
// (Codex's own list, which may have efforts tuttid's static list lacks);
// an unlisted model's must be one tuttid knows.
func TestCheckModelSettings(t *testing.T) {
	t.Parallel()
	e, _, rt, _ := accountEnv(t)
	rt.SetModels(append(agenttest.DefaultModels(), agent.Model{ID: "big", Model: "big",
		ReasoningEfforts: []string{"high", "max", "ultra"}}))
	for _, tc := range []struct {
		model, effort string
		want          string // "" accepted; else a text the invalid_input message has
	}{
		{"gpt-test", "xhigh", ""},
		{"gpt-test-mini", "high", "low, medium"},
		{"big", "max", ""},
		{"big", "ultra", ""},
		{"big", "low", "high, max, ultra"},
		{"another-provider-model", "high", ""},
		{"another-provider-model", "max", "unknown reasoning effort"},
		{"", "extreme", "unknown reasoning effort"},
		{"gpt-test-mini", "", ""},
	} {
		t.Run(tc.model+"/"+tc.effort, func(t *testing.T) {
			err := e.svc.CheckModelSettings(context.Background(), agent.ComposerSettings{Model: tc.model, ReasoningEffort: tc.effort})
			if tc.want == "" {
				if err != nil {
					t.Errorf("refused: %v", err)
				}
				return
			}
			ae := apperr.From(err)
			if ae.Code != apperr.InvalidInput || !strings.Contains(ae.Message, tc.want) {
				t.Errorf("got %v; want invalid_input naming %q", err, tc.want)
			}
		})
	}
	// Start uses it: an effort Codex's list allows passes, one it lacks not.
	_, err := e.sessions.Start(context.Background(), session.StartInput{WorkspaceID: "w",
		Settings: session.SettingsOverride{Model: strp("big"), ReasoningEffort: strp("max")}})
	if err != nil {
		t.Errorf("start on big/max: %v", err)
	}
	_, err = e.sessions.Start(context.Background(), session.StartInput{WorkspaceID: "w",
		Settings: session.SettingsOverride{Model: strp("gpt-test-mini"), ReasoningEffort: strp("xhigh")}})
	if apperr.CodeOf(err) != apperr.InvalidInput {
		t.Errorf("start on gpt-test-mini/xhigh = %v, want invalid_input", err)
	}
}

// TestLoginKeyStaysWithCodex: the API key reaches the runtime, and no
// error (message or cause) nor log line tuttid writes has it, even when
// the provider's own error repeats it.
func TestLoginKeyStaysWithCodex(t *testing.T) {
	t.Parallel()
	const key = "sk-test-SECRET-0123456789"
	e, _, rt, logs := accountEnv(t)
	ctx := context.Background()
	l, err := e.svc.StartLogin(ctx, agent.LoginInput{Method: agent.LoginAPIKey, APIKey: key})
	if err != nil || l.Account == nil || !l.Account.SignedIn {
		t.Fatalf("API key login = %+v, %v", l, err)
	}
	if got := rt.Logins(); len(got) != 1 || got[0].APIKey != key || got[0].Provider != agent.ProviderCodex {
		t.Errorf("runtime got %v", got)
	}
	rt.FailLogins(fmt.Errorf("%w: Codex refused key %s", agent.ErrInvalidSettings, key))
	_, err = e.svc.StartLogin(ctx, agent.LoginInput{Method: agent.LoginAPIKey, APIKey: key})
	if apperr.CodeOf(err) != apperr.InvalidInput {
		t.Errorf("refused login = %v, want invalid_input", err)
	}
	rt.FailLogins(fmt.Errorf("%w: no network for %s", agent.ErrLoginUnavailable, key))
	_, err2 := e.svc.StartLogin(ctx, agent.LoginInput{Method: agent.LoginAPIKey, APIKey: key})
	if apperr.CodeOf(err2) != apperr.ProviderLoginUnavailable {
		t.Errorf("unavailable login = %v, want %s", err2, apperr.ProviderLoginUnavailable)
	}
	for _, err := range []error{err, err2} {
		if strings.Contains(err.Error(), key) || strings.Contains(apperr.From(err).Message, key) {
			t.Errorf("error has the key: %v", err)
		}
		e.svc.log.Error("logged like a transport logs a failure", "err", err)
	}
	if strings.Contains(logs.String(), key) {
		t.Errorf("log has the key:\n%s", logs.String())
	}
	for _, tc := range []struct {
		in   agent.LoginInput
		want apperr.Code
	}{
		{agent.LoginInput{Method: agent.LoginAPIKey}, apperr.InvalidInput},
		{agent.LoginInput{Method: agent.LoginChatGPT, APIKey: key}, apperr.InvalidInput},
		{agent.LoginInput{Method: "PASSWORD"}, apperr.InvalidInput},
	} {
		if _, err := e.svc.StartLogin(ctx, tc.in); apperr.CodeOf(err) != tc.want {
			t.Errorf("StartLogin(%v) = %v, want %s", tc.in, err, tc.want)
		}
	}
}

// TestLoginMethodsAndLogout: the browser and device-code logins answer the
// URL and code, a cancel reaches the runtime, a logout answers the account
// after it.
func TestLoginMethodsAndLogout(t *testing.T) {
	t.Parallel()
	e, _, rt, _ := accountEnv(t)
	ctx := context.Background()
	l, err := e.svc.StartLogin(ctx, agent.LoginInput{Method: agent.LoginChatGPT})
	if err != nil || l.LoginID == "" || l.AuthURL == "" {
		t.Fatalf("ChatGPT login = %+v, %v", l, err)
	}
	d, err := e.svc.StartLogin(ctx, agent.LoginInput{Method: agent.LoginDeviceCode})
	if err != nil || d.VerificationURL == "" || d.UserCode == "" {
		t.Fatalf("device code login = %+v, %v", d, err)
	}
	if err := e.svc.CancelLogin(ctx, l.LoginID); err != nil {
		t.Fatal(err)
	}
	if got := rt.CanceledLogins(); len(got) != 1 || got[0] != l.LoginID {
		t.Errorf("canceled %v", got)
	}
	a, err := e.svc.Logout(ctx)
	if err != nil || a.SignedIn {
		t.Errorf("logout = %+v, %v", a, err)
	}
	if got, err := e.svc.Account(ctx); err != nil || got.SignedIn || !got.RequiresAuth {
		t.Errorf("account after logout = %+v, %v", got, err)
	}
	if err := e.svc.CheckSignedIn(ctx, "start the turn"); apperr.CodeOf(err) != apperr.ProviderNotSignedIn {
		t.Errorf("CheckSignedIn after logout = %v", err)
	}
	if err := e.svc.CancelLogin(ctx, ""); apperr.CodeOf(err) != apperr.InvalidInput {
		t.Errorf("CancelLogin without an id = %v, want invalid_input", err)
	}
}
