package agenttest

import (
	"context"
	"fmt"

	"tuttid/agent"
)

// accounts is the fake's agent.Accounts and agent.Steerer state, under
// Runtime.mu.
type accounts struct {
	account  *agent.Account // nil: signed in, on a provider that needs none
	models   []agent.Model  // nil: DefaultModels
	limits   *agent.RateLimits
	logins   []agent.LoginInput
	canceled []string
	loginErr error
	steers   []agent.SteerInput
	steerErr error
}

var (
	_ agent.Accounts = (*Runtime)(nil)
	_ agent.Steerer  = (*Runtime)(nil)
)

// DefaultModels is what Models answers unless SetModels changed it: a
// default model and a smaller one, each with its efforts.
func DefaultModels() []agent.Model {
	return []agent.Model{
		{ID: "gpt-test", Model: "gpt-test", DisplayName: "GPT Test", Description: "The default test model.",
			IsDefault: true, ReasoningEfforts: []string{"low", "medium", "high", "xhigh"}, DefaultReasoningEffort: "medium"},
		{ID: "gpt-test-mini", Model: "gpt-test-mini", DisplayName: "GPT Test Mini", Description: "A smaller test model.",
			ReasoningEfforts: []string{"low", "medium"}, DefaultReasoningEffort: "low"},
	}
}

// SetAccount sets what Account answers. While it is not SignedIn, Start,
// SendTurn and Fork fail with agent.ErrNotSignedIn, as the Codex runtime
// does with Config.RequireSignIn.
func (r *Runtime) SetAccount(a agent.Account) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.acct.account = &a
}

// SetModels sets what Models answers.
func (r *Runtime) SetModels(models []agent.Model) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.acct.models = models
}

// SetRateLimits sets what RateLimits answers (nil: none).
func (r *Runtime) SetRateLimits(l *agent.RateLimits) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.acct.limits = l
}

// FailLogins makes StartLogin fail with err (nil: succeed again).
func (r *Runtime) FailLogins(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.acct.loginErr = err
}

// FailSteers makes Steer fail with err (agent.ErrTurnNotRunning, say).
func (r *Runtime) FailSteers(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.acct.steerErr = err
}

// Logins are the StartLogin inputs so far (with their keys: a test checks
// the key reached the runtime).
func (r *Runtime) Logins() []agent.LoginInput { return snapshot(r, &r.acct.logins) }

// CanceledLogins are the login ids CancelLogin got.
func (r *Runtime) CanceledLogins() []string { return snapshot(r, &r.acct.canceled) }

// Steers are the Steer inputs so far.
func (r *Runtime) Steers() []agent.SteerInput { return snapshot(r, &r.acct.steers) }

// notSignedIn is the error Start, SendTurn and Fork give while the
// account is not signed in; r.mu held.
func (r *Runtime) notSignedIn() error {
	if a := r.acct.account; a != nil && !a.SignedIn {
		return fmt.Errorf("%w: test runtime not signed in", agent.ErrNotSignedIn)
	}
	return nil
}

func (r *Runtime) accountLocked() agent.Account {
	if r.acct.account == nil {
		return agent.Account{SignedIn: true}
	}
	return *r.acct.account
}

// Account answers SetAccount's account, by default signed in.
func (r *Runtime) Account(context.Context, string) (agent.Account, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.accountLocked(), nil
}

// StartLogin records the input. An API key login signs in at once; the
// others answer a pending login (login-<n>) with a URL or a code.
func (r *Runtime) StartLogin(_ context.Context, in agent.LoginInput) (agent.Login, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.acct.logins = append(r.acct.logins, in)
	if r.acct.loginErr != nil {
		return agent.Login{}, r.acct.loginErr
	}
	id := fmt.Sprintf("login-%d", len(r.acct.logins))
	switch in.Method {
	case agent.LoginAPIKey:
		if in.APIKey == "" {
			return agent.Login{}, fmt.Errorf("%w: an API key login needs the key", agent.ErrInvalidSettings)
		}
		a := agent.Account{SignedIn: true, RequiresAuth: true, AuthMode: "apiKey"}
		r.acct.account = &a
		return agent.Login{Account: &a}, nil
	case agent.LoginChatGPT:
		return agent.Login{LoginID: id, AuthURL: "https://auth.example.test/oauth/authorize?login=" + id}, nil
	case agent.LoginDeviceCode:
		return agent.Login{LoginID: id, VerificationURL: "https://auth.example.test/codex/device", UserCode: "TEST-0001"}, nil
	}
	return agent.Login{}, fmt.Errorf("%w: unknown login method %q", agent.ErrInvalidSettings, in.Method)
}

// CancelLogin records the id.
func (r *Runtime) CancelLogin(_ context.Context, _, loginID string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.acct.canceled = append(r.acct.canceled, loginID)
	return nil
}

// Logout leaves an account that needs a sign-in.
func (r *Runtime) Logout(context.Context, string) (agent.Account, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a := agent.Account{RequiresAuth: true}
	r.acct.account = &a
	return a, nil
}

// Models answers SetModels' list, by default DefaultModels.
func (r *Runtime) Models(context.Context, string) ([]agent.Model, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.acct.models == nil {
		return DefaultModels(), nil
	}
	return append([]agent.Model(nil), r.acct.models...), nil
}

// RateLimits answers SetRateLimits' limits.
func (r *Runtime) RateLimits(context.Context, string) (*agent.RateLimits, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.acct.limits, nil
}

// Steer records the input; FailSteers makes it fail.
func (r *Runtime) Steer(_ context.Context, in agent.SteerInput) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.acct.steers = append(r.acct.steers, in)
	return r.acct.steerErr
}
