package sessionread

import (
	"context"

	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/ent/approvalrequest"
)

// PendingApprovals lists a session's unresolved requests, oldest first.
func (s *Reader) PendingApprovals(ctx context.Context, sessionID string) ([]*ent.ApprovalRequest, error) {
	rows, err := s.store.Client.ApprovalRequest.Query().
		Where(approvalrequest.AgentSessionID(sessionID), approvalrequest.ResolvedAtIsNil()).
		Order(ent.Asc(approvalrequest.FieldCreatedAt), ent.Asc(approvalrequest.FieldID)).All(ctx)
	if err != nil {
		return nil, apperr.Storage(err, "read the approval requests")
	}
	return rows, nil
}

// Approvals lists all of a session's requests, oldest first.
func (s *Reader) Approvals(ctx context.Context, sessionID string) ([]*ent.ApprovalRequest, error) {
	rows, err := s.store.Client.ApprovalRequest.Query().
		Where(approvalrequest.AgentSessionID(sessionID)).
		Order(ent.Asc(approvalrequest.FieldCreatedAt), ent.Asc(approvalrequest.FieldID)).All(ctx)
	if err != nil {
		return nil, apperr.Storage(err, "read the approval requests")
	}
	return rows, nil
}
