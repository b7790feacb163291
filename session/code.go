package session

import (
	"context"

	"tuttid/codebranch"
	"tuttid/ent"
)

// Code is the code side of sessions (codebranch.Service): it records a
// session's files when it starts and when each turn ends, and drops what
// it kept when the session is deleted. Its failures are its own (logged):
// a session or turn never fails for them.
type Code interface {
	SessionStarted(ctx context.Context, a *ent.AgentSession)
	// TurnEnded returns the checkpoint to store on the turn; ok false
	// when there is none.
	TurnEnded(ctx context.Context, a *ent.AgentSession, turnID string) (cp codebranch.Checkpoint, ok bool)
	Forget(ctx context.Context, sessionID string)
}

// turnCheckpoint records the session's files at the end of a turn, before
// the turn is stored ended (so before the session turns READY).
func (s *Service) turnCheckpoint(ctx context.Context, a *ent.AgentSession, turnID string) (codebranch.Checkpoint, bool) {
	if s.code == nil {
		return codebranch.Checkpoint{}, false
	}
	return s.code.TurnEnded(ctx, a, turnID)
}
