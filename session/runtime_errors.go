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
	case errors.Is(err, agent.ErrInvalidSettings):
		return apperr.Wrap(err, apperr.InvalidInput, "could not %s: %v", what, err)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return apperr.Wrap(err, apperr.RuntimeUnavailable, "could not %s: the provider did not answer in time", what)
	default:
		return apperr.Wrap(err, apperr.ProviderFailed, "could not %s: the provider failed", what)
	}
}
