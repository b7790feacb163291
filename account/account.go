// Package account is the provider's account as tuttid shows it: whether
// Codex is signed in (and a refusal, saying how to sign in, of what it
// could not run), the login flows (API key, ChatGPT, device code) and
// their cancels, sign-out, the models and their reasoning efforts, the
// rate limits, and the account notifications published to every
// workspace. Sessions ask it before they start a turn (session.Accounts).
package account

import (
	"log/slog"

	"tuttid/activity"
	"tuttid/agent"
	"tuttid/session"
	"tuttid/store"
)

// Service answers for the runtime's account.
type Service struct {
	store *store.Store
	rt    agent.Runtime
	pub   activity.Publisher
	log   *slog.Logger
	// loginCancels: logins cancelled through tuttid, whose completion is
	// not a failure (login_cancels.go).
	loginCancels loginCancels
}

// Config wires a Service.
type Config struct {
	// Store lists the workspaces an account event goes to.
	Store *store.Store
	// Runtime has the accounts (agent.Accounts); one without answers
	// unsupported_provider, and never refuses a turn.
	Runtime   agent.Runtime
	Publisher activity.Publisher
	Logger    *slog.Logger
}

// New returns a Service.
func New(cfg Config) *Service {
	s := &Service{store: cfg.Store, rt: cfg.Runtime, pub: cfg.Publisher, log: cfg.Logger}
	if s.log == nil {
		s.log = slog.Default()
	}
	return s
}

var _ session.Accounts = (*Service)(nil)
