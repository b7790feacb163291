package agent

import "errors"

// Errors a Runtime returns, wrapped with detail; match them with errors.Is.
var (
	ErrUnsupportedProvider = errors.New("provider not supported")
	ErrRuntimeUnavailable  = errors.New("agent runtime unavailable")
	// ErrProviderFailed: the provider answered a request with an error.
	ErrProviderFailed  = errors.New("provider request failed")
	ErrThreadNotFound  = errors.New("provider thread not found")
	ErrTurnNotFound    = errors.New("provider turn not found")
	ErrTurnInProgress  = errors.New("provider turn in progress")
	ErrInvalidSettings = errors.New("invalid settings")
	// ErrHistoryUnavailable: the provider cannot vouch for a thread's
	// history (a fork then falls back to the parent's cached messages).
	ErrHistoryUnavailable = errors.New("provider history unavailable")
)

// ProviderError is a provider's error reply, kept whole for logs and
// wrapped around ErrProviderFailed (and a more precise sentinel when known).
type ProviderError struct {
	Method  string
	Code    int
	Message string
	Kind    error // a sentinel above, a provider-specific one, or nil
}

func (e *ProviderError) Error() string {
	return e.Method + ": " + e.Message
}

// Is lets errors.Is match ErrProviderFailed and the precise sentinel.
func (e *ProviderError) Is(target error) bool {
	return target == ErrProviderFailed || (e.Kind != nil && target == e.Kind)
}
