package session

import (
	"context"

	"tuttid/agent"
)

// Review has Codex review the code in a session's cwd as instructions say
// and returns the review's text (agent.Runtime.Review: on a throwaway
// fork of the session's thread, so the session's conversation is left as
// it was). A session running a turn is agent.session_busy: its files are
// still changing.
func (s *Service) Review(ctx context.Context, workspaceID, sessionID, instructions string) (string, error) {
	a, err := s.read.RequireSession(ctx, workspaceID, sessionID)
	if err != nil {
		return "", err
	}
	if err := requireIdleThread(a, "review it when the turn ended"); err != nil {
		return "", err
	}
	cwd, err := s.SessionCwd(ctx, a)
	if err != nil {
		return "", err
	}
	text, err := s.rt.Review(ctx, agent.ReviewInput{Provider: a.Provider, ThreadID: a.ProviderSessionID, Cwd: cwd,
		Settings: a.Settings, ModelProvider: ModelProviderOf(a), Instructions: instructions})
	if err != nil {
		return "", RuntimeError(err, "review the session's code")
	}
	return text, nil
}
