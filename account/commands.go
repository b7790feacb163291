package account

import (
	"context"
	"errors"
	"strings"

	"tuttid/agent"
	"tuttid/apperr"
	"tuttid/session"
	"tuttid/validate"
)

// accounts is the runtime's account side, or an error saying it has none.
func (s *Service) accounts() (agent.Accounts, error) {
	acc, ok := s.rt.(agent.Accounts)
	if !ok {
		return nil, apperr.New(apperr.UnsupportedProvider, "the agent runtime has no accounts")
	}
	return acc, nil
}

// Account is Codex's sign-in state.
func (s *Service) Account(ctx context.Context) (agent.Account, error) {
	acc, err := s.accounts()
	if err != nil {
		return agent.Account{}, err
	}
	a, err := acc.Account(ctx, agent.ProviderCodex)
	if err != nil {
		return agent.Account{}, session.RuntimeError(err, "read Codex's account")
	}
	return a, nil
}

// CheckSignedIn fails with agent.provider_not_signed_in while Codex cannot
// run a turn. A runtime without accounts, or one that cannot say, is not
// refused here: its own answer to the turn decides.
func (s *Service) CheckSignedIn(ctx context.Context, what string) error {
	acc, ok := s.rt.(agent.Accounts)
	if !ok {
		return nil
	}
	a, err := acc.Account(ctx, agent.ProviderCodex)
	if err != nil || a.SignedIn {
		return nil //nolint:nilerr // the runtime's next call reports an unreachable Codex
	}
	if a.CredentialsRefused {
		return apperr.Wrap(agent.ErrNotSignedIn, apperr.ProviderNotSignedIn,
			"could not %s: Codex's credentials were refused or have expired; %s", what, session.SignInHint)
	}
	return session.NotSignedIn(agent.ErrNotSignedIn, what)
}

// StartLogin starts a Codex sign-in. The API key goes to the runtime and
// nowhere else: it is never logged, stored or put in an error.
func (s *Service) StartLogin(ctx context.Context, in agent.LoginInput) (agent.Login, error) {
	in.Provider = agent.ProviderCodex
	switch in.Method {
	case agent.LoginAPIKey:
		if strings.TrimSpace(in.APIKey) == "" {
			return agent.Login{}, apperr.New(apperr.InvalidInput, "apiKey is required for the API_KEY method")
		}
	case agent.LoginChatGPT, agent.LoginDeviceCode:
		if in.APIKey != "" {
			return agent.Login{}, apperr.New(apperr.InvalidInput, "apiKey is only for the API_KEY method")
		}
	default:
		return agent.Login{}, apperr.New(apperr.InvalidInput, "method %q is not one of API_KEY, CHATGPT, DEVICE_CODE", in.Method)
	}
	acc, err := s.accounts()
	if err != nil {
		return agent.Login{}, err
	}
	l, err := acc.StartLogin(ctx, in)
	if err != nil {
		return agent.Login{}, loginError(err, in.APIKey)
	}
	s.log.DebugContext(ctx, "codex login started", "method", in.Method, "login", l.LoginID, "complete", l.Account != nil)
	return l, nil
}

// loginError maps a failed login without the provider's text, which could
// repeat the key; the cause kept for logs has the key cut out.
func loginError(err error, key string) *apperr.Error {
	cause := err
	if key != "" && strings.Contains(err.Error(), key) {
		cause = errors.New(strings.ReplaceAll(err.Error(), key, "[redacted]"))
	}
	switch {
	case errors.Is(err, agent.ErrInvalidSettings):
		return apperr.Wrap(cause, apperr.InvalidInput, "Codex refused the login request; check the method and the key")
	case errors.Is(err, agent.ErrLoginUnavailable):
		return apperr.Wrap(cause, apperr.ProviderLoginUnavailable, "Codex could not start a login of this kind")
	case errors.Is(err, agent.ErrRuntimeUnavailable):
		return apperr.Wrap(cause, apperr.RuntimeUnavailable, "could not sign in: the agent runtime is unavailable")
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return apperr.Wrap(cause, apperr.RuntimeUnavailable, "could not sign in: Codex did not answer in time")
	}
	return apperr.Wrap(cause, apperr.ProviderFailed, "could not sign in: Codex refused the login")
}

// CancelLogin stops a pending login.
func (s *Service) CancelLogin(ctx context.Context, loginID string) error {
	if err := validate.ID("loginId", loginID); err != nil {
		return err
	}
	acc, err := s.accounts()
	if err != nil {
		return err
	}
	// Remembered before Codex is asked: its completion may come first.
	s.loginCancels.add(loginID)
	if err := acc.CancelLogin(ctx, agent.ProviderCodex, loginID); err != nil {
		s.loginCancels.take(loginID)
		return session.RuntimeError(err, "cancel the login")
	}
	return nil
}

// Logout signs Codex out and returns the account after it.
func (s *Service) Logout(ctx context.Context) (agent.Account, error) {
	acc, err := s.accounts()
	if err != nil {
		return agent.Account{}, err
	}
	a, err := acc.Logout(ctx, agent.ProviderCodex)
	if err != nil {
		return agent.Account{}, session.RuntimeError(err, "sign Codex out")
	}
	s.log.InfoContext(ctx, "codex signed out")
	return a, nil
}

// Models lists the models Codex offers.
func (s *Service) Models(ctx context.Context) ([]agent.Model, error) {
	acc, err := s.accounts()
	if err != nil {
		return nil, err
	}
	m, err := acc.Models(ctx, agent.ProviderCodex)
	if err != nil {
		return nil, session.RuntimeError(err, "list Codex's models")
	}
	return m, nil
}

// RateLimits are Codex's usage limits as last reported, nil when none.
func (s *Service) RateLimits(ctx context.Context) (*agent.RateLimits, error) {
	acc, ok := s.rt.(agent.Accounts)
	if !ok {
		return nil, nil
	}
	l, err := acc.RateLimits(ctx, agent.ProviderCodex)
	if err != nil {
		return nil, session.RuntimeError(err, "read Codex's rate limits")
	}
	return l, nil
}

// CheckModelSettings checks settings against Codex's models: a listed
// model's reasoning effort must be one it supports; an unlisted model's
// must be one tuttid knows (Codex's answer then decides). Without the
// model list (no accounts, Codex unreachable) the static list decides.
func (s *Service) CheckModelSettings(ctx context.Context, st agent.ComposerSettings) error {
	if st.ReasoningEffort == "" {
		return nil
	}
	var models []agent.Model
	if acc, ok := s.rt.(agent.Accounts); ok {
		m, err := acc.Models(ctx, agent.ProviderCodex)
		if err != nil {
			s.log.WarnContext(ctx, "settings: Codex's models unavailable; checking the effort against the static list", "err", err)
		}
		models = m
	}
	return session.CheckEffort(models, st)
}
