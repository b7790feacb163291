package session

import (
	"context"

	"tuttid/ent"
	"tuttid/readahead"
)

// Session returns a session of a workspace, or nil when there is none
// (the read model's lookup, for the commands' callers that hold only this
// service).
func (s *Service) Session(ctx context.Context, workspaceID, id string) (*ent.AgentSession, error) {
	return s.read.Session(ctx, workspaceID, id)
}

// sessionList is the list a session came in (package readahead), or nil
// (read on its own).
func sessionList(ctx context.Context, sessionID string) *readahead.List {
	return readahead.From(ctx).ListOf(readahead.Sessions, sessionID)
}
