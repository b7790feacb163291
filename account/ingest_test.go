package account

import (
	"context"
	"strings"
	"testing"

	"tuttid/activity"
	"tuttid/agent"
	"tuttid/store/storetest"
)

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
		if err := e.sessions.HandleEvent(ctx, ev); err != nil {
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
		if err := e.sessions.HandleEvent(ctx, ev); err != nil {
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
