package session

import (
	"context"
	"errors"

	"tuttid/agent"
	"tuttid/apperr"
)

// RuntimeError maps a runtime failure while doing what to a stable code:
// the one mapping for every service that calls the runtime (a fork refines
// the provider's own refusals). A call that timed out is the runtime being
// unavailable, not the provider failing.
func RuntimeError(err error, what string) *apperr.Error {
	switch {
	case errors.Is(err, agent.ErrRuntimeUnavailable):
		return apperr.Wrap(err, apperr.RuntimeUnavailable, "could not %s: the agent runtime is unavailable", what)
	case errors.Is(err, agent.ErrUnsupportedProvider):
		return apperr.Wrap(err, apperr.UnsupportedProvider, "could not %s: the provider is not supported", what)
	case errors.Is(err, agent.ErrNotSignedIn):
		return NotSignedIn(err, what)
	case errors.Is(err, agent.ErrTurnNotRunning):
		return apperr.Wrap(err, apperr.TurnNotRunning, "could not %s: the turn is not running", what)
	case errors.Is(err, agent.ErrLoginUnavailable):
		return apperr.Wrap(err, apperr.ProviderLoginUnavailable, "could not %s: Codex could not start a login of this kind", what)
	case errors.Is(err, agent.ErrInvalidSettings):
		return apperr.Wrap(err, apperr.InvalidInput, "could not %s: %v", what, err)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return apperr.Wrap(err, apperr.RuntimeUnavailable, "could not %s: the provider did not answer in time", what)
	default:
		return apperr.Wrap(err, apperr.ProviderFailed, "could not %s: the provider failed", what)
	}
}

// SignInHint says how a person signs Codex in from tuttid.
const SignInHint = "sign in to Codex first: in the GUI's \"Sign in to Codex\" dialog, or with the startCodexLogin mutation (method API_KEY, CHATGPT or DEVICE_CODE)"

// NotSignedIn is agent.provider_not_signed_in, saying how to sign in.
// The provider's own text is not shown: it is the cause, kept for logs.
func NotSignedIn(err error, what string) *apperr.Error {
	if err == nil {
		err = agent.ErrNotSignedIn
	}
	return apperr.Wrap(err, apperr.ProviderNotSignedIn, "could not %s: Codex is not signed in; %s", what, SignInHint)
}
