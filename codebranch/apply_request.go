package codebranch

import (
	"context"

	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/lineage"
	"tuttid/validate"
)

// ApplyRequest is applySessionChanges as the transports receive it.
type ApplyRequest struct {
	WorkspaceID string
	// SessionID is the source: a WORKTREE session whose changes go back.
	SessionID string
	// TargetSessionID is the session whose files get them; nil: the
	// source's parent.
	TargetSessionID *string
	DryRun          bool
}

// ApplyChanges checks a request, finds its source and target (by default
// the source's parent) and applies (Apply). An id of no session of the
// workspace is agent.session_not_found; a root source with no target
// named is invalid_input.
func (s *Service) ApplyChanges(ctx context.Context, req ApplyRequest) (ApplyResult, error) {
	if err := validate.ID("workspaceId", req.WorkspaceID); err != nil {
		return ApplyResult{}, err
	}
	if err := validate.ID("agentSessionId", req.SessionID); err != nil {
		return ApplyResult{}, err
	}
	source, err := s.session(ctx, req.WorkspaceID, req.SessionID)
	if err != nil {
		return ApplyResult{}, err
	}
	var target *ent.AgentSession
	if req.TargetSessionID != nil {
		if err := validate.ID("targetAgentSessionId", *req.TargetSessionID); err != nil {
			return ApplyResult{}, err
		}
		if target, err = s.session(ctx, req.WorkspaceID, *req.TargetSessionID); err != nil {
			return ApplyResult{}, err
		}
	} else {
		if target, err = lineage.Parent(ctx, s.store.Client, source.WorkspaceID, source.ID); err != nil {
			return ApplyResult{}, apperr.Storage(err, "read the parent session")
		}
		if target == nil {
			return ApplyResult{}, apperr.New(apperr.InvalidInput, "session %q has no parent: name the session to apply to in targetAgentSessionId", source.ID)
		}
	}
	return s.Apply(ctx, source, target, req.DryRun)
}

// session is a session of the workspace, or agent.session_not_found.
func (s *Service) session(ctx context.Context, workspaceID, id string) (*ent.AgentSession, error) {
	a, err := s.store.Client.AgentSession.Query().
		Where(agentsession.ID(id), agentsession.WorkspaceID(workspaceID)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, apperr.New(apperr.SessionNotFound, "session %q does not exist in workspace %q", id, workspaceID)
	}
	if err != nil {
		return nil, apperr.Storage(err, "read the session")
	}
	return a, nil
}
