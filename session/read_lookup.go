package session

import (
	"context"

	"tuttid/ent"
)

// Session returns a session of a workspace, or nil when there is none
// (the read model's lookup, for the commands' callers that hold only this
// service).
func (s *Service) Session(ctx context.Context, workspaceID, id string) (*ent.AgentSession, error) {
	return s.read.Session(ctx, workspaceID, id)
}
