package account

import (
	"context"

	"tuttid/activity"
	"tuttid/agent"
)

// Updated tells every workspace's subscribers that the account
// changed (a login completed or failed, a logout, refused credentials).
func (s *Service) Updated(ctx context.Context, e agent.Event) error {
	if e.Account == nil {
		return nil
	}
	acct := *e.Account
	if e.Error != "" && e.LoginID != "" && s.loginCancels.take(e.LoginID) {
		// The person cancelled it: what they asked for, not a failure.
		s.log.DebugContext(ctx, "codex login cancelled", "login", e.LoginID, "error", e.Error)
		e.Error = ""
	}
	s.log.InfoContext(ctx, "codex account updated", "signed_in", acct.SignedIn, "auth_mode", acct.AuthMode,
		"login", e.LoginID, "error", e.Error, "credentials_refused", acct.CredentialsRefused)
	return s.publishToEveryWorkspace(ctx, activity.Event{Kind: activity.AccountUpdated, Account: &acct, Error: e.Error})
}

// publishToEveryWorkspace publishes ev, which belongs to no session, once
// per workspace: it reaches every subscription.
func (s *Service) publishToEveryWorkspace(ctx context.Context, ev activity.Event) error {
	if s.pub == nil {
		return nil
	}
	ids, err := s.store.Client.Workspace.Query().IDs(ctx)
	if err != nil {
		return err
	}
	for _, id := range ids {
		ev.WorkspaceID = id
		s.pub.Publish(ctx, ev)
	}
	return nil
}
