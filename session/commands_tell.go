package session

import (
	"context"

	"tuttid/agent"
	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/ent/agentsession"
)

// Tell appends text to a session's conversation as a user message without
// starting a turn: the session's next turn sees it (Codex's
// thread/inject_items). A session running a turn is agent.session_busy:
// Codex would answer the text inside that turn. The session lock is held
// throughout, so a send waits until the text is in.
func (s *Service) Tell(ctx context.Context, workspaceID, sessionID, text string) error {
	a, err := s.read.RequireSession(ctx, workspaceID, sessionID)
	if err != nil {
		return err
	}
	cwd, err := s.SessionCwd(ctx, a)
	if err != nil {
		return err
	}
	defer s.LockSession(a.ID)()
	if a, err = s.store.Client.AgentSession.Get(ctx, a.ID); err != nil {
		if ent.IsNotFound(err) {
			return apperr.New(apperr.SessionNotFound, "agent session %q does not exist", sessionID)
		}
		return apperr.Storage(err, "read the session")
	}
	if err := requireIdleThread(a, "wait for it or interrupt it"); err != nil {
		return err
	}
	err = s.rt.Inject(context.WithoutCancel(ctx), agent.InjectInput{
		Provider: a.Provider, ThreadID: a.ProviderSessionID, Cwd: cwd, Settings: a.Settings,
		ModelProvider: ModelProviderOf(a), Text: text,
	})
	if err != nil {
		return RuntimeError(err, "tell the session")
	}
	return nil
}

// requireIdleThread refuses a session running a turn (busy says what to do
// instead) or without a provider thread: Tell's message would join a
// running turn, and Review would read files the turn is still changing.
func requireIdleThread(a *ent.AgentSession, busy string) error {
	if a.Status == agentsession.StatusWORKING {
		return apperr.New(apperr.SessionBusy, "session %q is running a turn; %s", a.ID, busy)
	}
	if a.ProviderSessionID == "" {
		return apperr.New(apperr.ForkProviderSessionMissing, "session %q has no provider thread", a.ID)
	}
	return nil
}
