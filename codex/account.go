package codex

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"tuttid/agent"
)

// accountState is what the runtime knows of Codex's account, models and
// usage limits, kept current from Codex's notifications (observe) so that
// reading it costs no call once known.
type accountState struct {
	mu    sync.Mutex
	known bool // acct was read (account/read) since the last change
	acct  agent.Account
	// refused: a turn failed with the credentials refused; Codex's
	// account/read still shows the account, so this outlives a re-read
	// until a login, a logout or Codex's account/updated.
	refused bool
	limits  *agent.RateLimits
	models  []agent.Model // nil until read
}

var (
	_ agent.Accounts = (*Runtime)(nil)
	_ agent.Steerer  = (*Runtime)(nil)
)

// notSignedInHint is the part of agent.ErrNotSignedIn's message that says
// how to sign in.
const notSignedInHint = "Codex needs a sign-in before it can run a turn: sign in from the page " +
	"(\"Sign in to Codex\": an API key, ChatGPT in the browser or a device code; GraphQL startCodexLogin), " +
	"or run `codex login` with the same CODEX_HOME"

// Account implements agent.Accounts: account/read once, then what Codex's
// notifications say.
func (r *Runtime) Account(ctx context.Context, provider string) (agent.Account, error) {
	if err := checkProvider(provider); err != nil {
		return agent.Account{}, err
	}
	st := r.acct
	st.mu.Lock()
	if st.known {
		a := st.acct
		st.mu.Unlock()
		return a, nil
	}
	st.mu.Unlock()
	return r.readAccount(ctx)
}

// readAccount asks Codex (account/read) and records the answer.
func (r *Runtime) readAccount(ctx context.Context) (agent.Account, error) {
	p, err := r.current()
	if err != nil {
		return agent.Account{}, err
	}
	var resp wireGetAccount
	if err := r.call(ctx, p, "account/read", map[string]any{}, &resp); err != nil {
		return agent.Account{}, err
	}
	a := agent.Account{RequiresAuth: resp.RequiresOpenaiAuth}
	if resp.Account != nil {
		a.AuthMode = resp.Account.Type
		a.Email = strOr(resp.Account.Email, "")
		a.PlanType = strOr(resp.Account.PlanType, "")
	}
	a.SignedIn = a.AuthMode != "" || !a.RequiresAuth
	st := r.acct
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.refused && a.AuthMode != "" {
		a.SignedIn, a.CredentialsRefused = false, true
	}
	st.acct, st.known = a, true
	return a, nil
}

// checkSignedIn refuses a turn Codex cannot run (Config.RequireSignIn).
// An account Codex cannot report (an old Codex, a fake) is not refused.
func (r *Runtime) checkSignedIn(ctx context.Context) error {
	if !r.cfg.RequireSignIn {
		return nil
	}
	a, err := r.Account(ctx, agent.ProviderCodex)
	if err != nil || a.SignedIn {
		return nil //nolint:nilerr // the call itself reports an unreachable Codex
	}
	if a.CredentialsRefused {
		return fmt.Errorf("%w: Codex's credentials (%s) were refused or have expired; %s", agent.ErrNotSignedIn, a.AuthMode, notSignedInHint)
	}
	return fmt.Errorf("%w: %s", agent.ErrNotSignedIn, notSignedInHint)
}

// StartLogin implements agent.Accounts: account/login/start. The API key
// goes into the request and nowhere else: no log line, error or event
// carries it.
func (r *Runtime) StartLogin(ctx context.Context, in agent.LoginInput) (agent.Login, error) {
	if err := checkProvider(in.Provider); err != nil {
		return agent.Login{}, err
	}
	var params map[string]any
	switch in.Method {
	case agent.LoginAPIKey:
		if strings.TrimSpace(in.APIKey) == "" {
			return agent.Login{}, fmt.Errorf("%w: an API key login needs the key", agent.ErrInvalidSettings)
		}
		params = map[string]any{"type": "apiKey", "apiKey": in.APIKey}
	case agent.LoginChatGPT:
		params = map[string]any{"type": "chatgpt"}
	case agent.LoginDeviceCode:
		params = map[string]any{"type": "chatgptDeviceCode"}
	default:
		return agent.Login{}, fmt.Errorf("%w: unknown login method %q", agent.ErrInvalidSettings, in.Method)
	}
	if in.Method != agent.LoginAPIKey && in.APIKey != "" {
		return agent.Login{}, fmt.Errorf("%w: an API key goes with the API key method only", agent.ErrInvalidSettings)
	}
	p, err := r.current()
	if err != nil {
		return agent.Login{}, err
	}
	var resp wireLoginResponse
	if err := r.call(ctx, p, "account/login/start", params, &resp); err != nil {
		err = withoutSecret(err, in.APIKey)
		if in.Method != agent.LoginAPIKey && errors.Is(err, agent.ErrProviderFailed) {
			// Codex could not reach its sign-in service (device code) or
			// bind its callback (ChatGPT).
			err = fmt.Errorf("%w: %w", agent.ErrLoginUnavailable, err)
		}
		return agent.Login{}, err
	}
	r.log.Info("codex login started", "method", string(in.Method), "login", resp.LoginID)
	out := agent.Login{LoginID: resp.LoginID, AuthURL: resp.AuthURL, VerificationURL: resp.VerificationURL, UserCode: resp.UserCode}
	if resp.Type == "apiKey" {
		// Complete at once (account/login/completed and account/updated
		// follow): the account as Codex now reports it.
		r.acct.mu.Lock()
		r.acct.refused, r.acct.known = false, false
		r.acct.mu.Unlock()
		a, err := r.readAccount(ctx)
		if err != nil {
			return agent.Login{}, err
		}
		out.Account = &a
	}
	return out, nil
}

// withoutSecret drops an error's text if it holds the secret (Codex never
// echoed a key in the versions tested; this makes sure of it).
func withoutSecret(err error, secret string) error {
	if err == nil || secret == "" || !strings.Contains(err.Error(), secret) {
		return err
	}
	if errors.Is(err, agent.ErrRuntimeUnavailable) {
		return fmt.Errorf("%w: codex account/login/start failed (message withheld: it held the key)", agent.ErrRuntimeUnavailable)
	}
	return fmt.Errorf("%w: codex account/login/start failed (message withheld: it held the key)", agent.ErrProviderFailed)
}

// CancelLogin implements agent.Accounts: account/login/cancel. Codex then
// reports the login failed ("Login was not completed").
func (r *Runtime) CancelLogin(ctx context.Context, provider, loginID string) error {
	if err := checkProvider(provider); err != nil {
		return err
	}
	p, err := r.current()
	if err != nil {
		return err
	}
	var resp wireCancelLogin // status canceled or notFound: both leave no login
	return r.call(ctx, p, "account/login/cancel", map[string]string{"loginId": loginID}, &resp)
}

// Logout implements agent.Accounts: account/logout, then account/read.
func (r *Runtime) Logout(ctx context.Context, provider string) (agent.Account, error) {
	if err := checkProvider(provider); err != nil {
		return agent.Account{}, err
	}
	p, err := r.current()
	if err != nil {
		return agent.Account{}, err
	}
	if err := r.call(ctx, p, "account/logout", map[string]any{}, nil); err != nil {
		return agent.Account{}, err
	}
	r.acct.mu.Lock()
	r.acct.refused, r.acct.known, r.acct.limits = false, false, nil
	r.acct.mu.Unlock()
	return r.readAccount(ctx)
}

// RateLimits implements agent.Accounts: the limits Codex last reported
// (account/rateLimits/updated, sent after model calls), else
// account/rateLimits/read, which Codex answers only for a ChatGPT account
// ("chatgpt authentication required to read rate limits" otherwise: no
// limits).
func (r *Runtime) RateLimits(ctx context.Context, provider string) (*agent.RateLimits, error) {
	if err := checkProvider(provider); err != nil {
		return nil, err
	}
	r.acct.mu.Lock()
	limits := r.acct.limits
	r.acct.mu.Unlock()
	if limits != nil {
		return limits, nil
	}
	p, err := r.current()
	if err != nil {
		return nil, err
	}
	var resp wireRateLimits
	err = r.call(ctx, p, "account/rateLimits/read", map[string]any{}, &resp)
	if errors.Is(err, agent.ErrProviderFailed) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	limits = rateLimitsOf(resp.RateLimits, time.Now())
	r.acct.mu.Lock()
	if r.acct.limits == nil {
		r.acct.limits = limits
	}
	r.acct.mu.Unlock()
	return limits, nil
}

// observe keeps the account state current from the events it sees and
// completes the account events with it (eventQueue.observe). It runs on
// the reader goroutine for notifications: no Codex call here.
func (r *Runtime) observe(e agent.Event) (agent.Event, []agent.Event) {
	st := r.acct
	switch e.Kind {
	case agent.EventWarning:
		r.log.Warn("codex warning", "method", e.Method, "thread", e.ThreadID, "text", e.Notice)
	case agent.EventTurnRetrying:
		code := ""
		if e.Failure != nil {
			code = e.Failure.Code
		}
		r.log.Warn("codex retrying a model request", "thread", e.ThreadID, "turn", e.TurnID,
			"error", e.Error, "error_code", code)
	case agent.EventRuntimeRestarted:
		st.mu.Lock()
		st.known = false
		st.mu.Unlock()
	case agent.EventAccountUpdated:
		st.mu.Lock()
		defer st.mu.Unlock()
		cur := st.acct
		if !st.known {
			cur.RequiresAuth = true // Codex's own provider, until read
		}
		switch {
		case e.Account != nil: // account/updated
			a := *e.Account
			a.RequiresAuth = cur.RequiresAuth
			a.SignedIn = a.AuthMode != "" || !a.RequiresAuth
			if a.AuthMode == cur.AuthMode {
				a.Email = cur.Email
			}
			st.acct, st.refused = a, false
			// Re-read details (email) at the next Account.
			st.known = false
			st.models = nil // a new account may see other models
		case e.Error == "": // a login completed
			cur.SignedIn, cur.CredentialsRefused = true, false
			st.acct, st.refused, st.known = cur, false, false
		}
		a := st.acct
		e.Account = &a
	case agent.EventRateLimits:
		st.mu.Lock()
		// Codex's updates are sparse: a window it leaves out keeps its
		// last value.
		if old := st.limits; old != nil && e.RateLimits != nil {
			merged := *e.RateLimits
			if merged.Primary == nil {
				merged.Primary = old.Primary
			}
			if merged.Secondary == nil {
				merged.Secondary = old.Secondary
			}
			e.RateLimits = &merged
		}
		if e.RateLimits == nil {
			e.RateLimits = st.limits
		} else {
			st.limits = e.RateLimits
		}
		st.mu.Unlock()
	case agent.EventTurnCompleted:
		if e.Failure == nil || e.Failure.Code != agent.ErrorUnauthorized {
			return e, nil
		}
		st.mu.Lock()
		defer st.mu.Unlock()
		a := st.acct
		if st.known && !a.RequiresAuth {
			return e, nil // a custom provider's key: no Codex sign-in helps
		}
		a.SignedIn, a.CredentialsRefused = false, true
		if !st.known {
			a.RequiresAuth = true
		}
		st.acct, st.refused = a, true
		r.log.Warn("codex credentials refused: sign in again", "thread", e.ThreadID, "turn", e.TurnID,
			"auth_mode", a.AuthMode)
		return e, []agent.Event{{Kind: agent.EventAccountUpdated, Provider: agent.ProviderCodex, Method: e.Method, Account: &a}}
	}
	return e, nil
}
