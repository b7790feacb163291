package account

import (
	"context"

	"tuttid/activity"
	"tuttid/agent"
)

// Updated takes an account notification (a login completed or failed, a
// logout, refused credentials) and returns the ACCOUNT_UPDATED event that
// session publishes to every workspace; ok is false for none.
func (s *Service) Updated(ctx context.Context, e agent.Event) (ev activity.Event, ok bool) {
	if e.Account == nil {
		return activity.Event{}, false
	}
	acct := *e.Account
	if e.Error != "" && e.LoginID != "" && s.loginCancels.take(e.LoginID) {
		// The person cancelled it: what they asked for, not a failure.
		s.log.DebugContext(ctx, "codex login cancelled", "login", e.LoginID, "error", e.Error)
		e.Error = ""
	}
	s.log.InfoContext(ctx, "codex account updated", "signed_in", acct.SignedIn, "auth_mode", acct.AuthMode,
		"login", e.LoginID, "error", e.Error, "credentials_refused", acct.CredentialsRefused)
	return activity.Event{Kind: activity.AccountUpdated, Account: &acct, Error: e.Error}, true
}
