// Package account is the provider's account as tuttid shows it: whether
// Codex is signed in (and a refusal, saying how to sign in, of what it
// could not run), the login flows (API key, ChatGPT, device code) and
// their cancels, sign-out, the models and their reasoning efforts, the
// rate limits, and what an account notification tells every workspace.
// Sessions ask it before they start a turn (session.Accounts).
package account

import (
	"log/slog"

	"tuttid/agent"
	"tuttid/session"
)

// Service answers for the runtime's account.
type Service struct {
	rt  agent.Runtime
	log *slog.Logger
	// loginCancels: logins cancelled through tuttid, whose completion is
	// not a failure (login_cancels.go).
	loginCancels loginCancels
}

// Config wires a Service.
type Config struct {
	// Runtime has the accounts (agent.Accounts); one without answers
	// unsupported_provider, and never refuses a turn.
	Runtime agent.Runtime
	Logger  *slog.Logger
}

// New returns a Service.
func New(cfg Config) *Service {
	s := &Service{rt: cfg.Runtime, log: cfg.Logger}
	if s.log == nil {
		s.log = slog.Default()
	}
	return s
}

var _ session.Accounts = (*Service)(nil)
