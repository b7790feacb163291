package agenttest_test

import (
	"context"
	"errors"
	"testing"

	"tuttid/agent"
	"tuttid/agent/agenttest"
)

func TestAccountsAndSteer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := agenttest.New()
	if a, err := r.Account(ctx, agent.ProviderCodex); err != nil || !a.SignedIn {
		t.Fatalf("default account = %+v, %v", a, err)
	}
	if m, _ := r.Models(ctx, agent.ProviderCodex); len(m) != 2 || !m[0].IsDefault {
		t.Fatalf("default models = %+v", m)
	}

	// Not signed in: what would run a turn is refused.
	r.SetAccount(agent.Account{RequiresAuth: true})
	if _, err := r.Start(ctx, agent.StartInput{}); !errors.Is(err, agent.ErrNotSignedIn) {
		t.Errorf("Start signed out: %v", err)
	}
	if _, err := r.SendTurn(ctx, agent.SendTurnInput{}); !errors.Is(err, agent.ErrNotSignedIn) {
		t.Errorf("SendTurn signed out: %v", err)
	}
	if _, err := r.Fork(ctx, agent.RuntimeForkInput{}); !errors.Is(err, agent.ErrNotSignedIn) {
		t.Errorf("Fork signed out: %v", err)
	}

	l, err := r.StartLogin(ctx, agent.LoginInput{Method: agent.LoginChatGPT})
	if err != nil || l.LoginID == "" || l.AuthURL == "" {
		t.Fatalf("ChatGPT login = %+v, %v", l, err)
	}
	_ = r.CancelLogin(ctx, agent.ProviderCodex, l.LoginID)
	if l, err := r.StartLogin(ctx, agent.LoginInput{Method: agent.LoginDeviceCode}); err != nil || l.UserCode == "" || l.VerificationURL == "" {
		t.Fatalf("device code login = %+v, %v", l, err)
	}
	l, err = r.StartLogin(ctx, agent.LoginInput{Method: agent.LoginAPIKey, APIKey: "k"})
	if err != nil || l.Account == nil || !l.Account.SignedIn {
		t.Fatalf("API key login = %+v, %v", l, err)
	}
	if _, err := r.Start(ctx, agent.StartInput{}); err != nil {
		t.Errorf("Start signed in: %v", err)
	}
	if a, _ := r.Logout(ctx, agent.ProviderCodex); a.SignedIn {
		t.Errorf("after logout = %+v", a)
	}
	if got := r.Logins(); len(got) != 3 || got[2].APIKey != "k" || len(r.CanceledLogins()) != 1 || r.CanceledLogins()[0] != "login-1" {
		t.Errorf("logins %v, canceled %v", got, r.CanceledLogins())
	}

	if err := r.Steer(ctx, agent.SteerInput{TurnID: "t", Text: "more"}); err != nil || r.Steers()[0].Text != "more" {
		t.Errorf("Steer: %v %+v", err, r.Steers())
	}
	r.FailSteers(agent.ErrTurnNotRunning)
	if err := r.Steer(ctx, agent.SteerInput{}); !errors.Is(err, agent.ErrTurnNotRunning) {
		t.Errorf("failing Steer: %v", err)
	}
}
