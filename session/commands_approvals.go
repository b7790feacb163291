package session

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"tuttid/activity"
	"tuttid/agent"
	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/ent/approvalrequest"
	"tuttid/store"
	"tuttid/validate"
)

// MaxAnswersBytes bounds the answers a person sends with a decision.
const MaxAnswersBytes = 64 << 10

// RespondInput is a person's answer to an approval request.
type RespondInput struct {
	WorkspaceID    string
	AgentSessionID string
	ApprovalID     string
	Decision       agent.ApprovalDecision
	// Answers: for USER_INPUT (question id -> {"answers": [...]}) and
	// MCP_ELICITATION (the form's content), with ACCEPT. Optional.
	Answers json.RawMessage
}

// RespondToApproval sends a person's decision to the provider and records
// it. Errors: agent.approval_not_found, agent.approval_already_resolved,
// invalid_input (a decision the request does not offer, bad answers).
func (s *Service) RespondToApproval(ctx context.Context, in RespondInput) (*ent.ApprovalRequest, error) {
	if err := validate.ID("approvalId", in.ApprovalID); err != nil {
		return nil, err
	}
	if !slices.Contains(agent.ApprovalDecisions(), in.Decision) {
		return nil, apperr.New(apperr.InvalidInput, "decision %q is not one of %v", in.Decision, agent.ApprovalDecisions())
	}
	if len(in.Answers) > MaxAnswersBytes {
		return nil, apperr.New(apperr.InvalidInput, "answers are %d bytes, over the limit of %d", len(in.Answers), MaxAnswersBytes)
	}
	if len(in.Answers) > 0 && string(in.Answers) != "null" {
		var obj map[string]json.RawMessage
		if json.Unmarshal(in.Answers, &obj) != nil {
			return nil, apperr.New(apperr.InvalidInput, "answers must be a JSON object")
		}
	}
	a, err := s.read.RequireSession(ctx, in.WorkspaceID, in.AgentSessionID)
	if err != nil {
		return nil, err
	}
	req, err := s.store.Client.ApprovalRequest.Query().
		Where(approvalrequest.ID(in.ApprovalID), approvalrequest.AgentSessionID(a.ID)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, apperr.New(apperr.ApprovalNotFound, "approval request %q does not exist in session %q", in.ApprovalID, a.ID)
	}
	if err != nil {
		return nil, apperr.Storage(err, "read the approval request")
	}
	if req.ResolvedAt != nil {
		return nil, alreadyResolved(req)
	}
	if !slices.Contains(req.AvailableDecisions, string(in.Decision)) {
		return nil, apperr.New(apperr.InvalidInput, "decision %s is not offered for this request (offered: %v)", in.Decision, req.AvailableDecisions)
	}
	err = s.rt.RespondToApproval(ctx, agent.ApprovalResponse{Provider: a.Provider, ID: req.ID, Decision: in.Decision, Answers: in.Answers})
	switch {
	case errors.Is(err, agent.ErrApprovalNotPending):
		// The provider no longer waits for it: answered a moment ago, or
		// its turn ended. The runtime reported how; ingestion records it.
		if cur, rerr := s.store.Client.ApprovalRequest.Get(ctx, req.ID); rerr == nil {
			req = cur
		}
		return nil, alreadyResolved(req)
	case errors.Is(err, agent.ErrApprovalDecisionNotOffered):
		return nil, apperr.Wrap(err, apperr.InvalidInput, "decision %s is not offered for this request", in.Decision)
	case err != nil:
		return nil, RuntimeError(err, "answer the approval request")
	}
	return s.approvals.resolve(ctx, a, req.ID, in.Decision, "user")
}

func alreadyResolved(req *ent.ApprovalRequest) error {
	if req.Decision != nil {
		return apperr.New(apperr.ApprovalAlreadyResolved, "approval request %q was already resolved (%s)", req.ID, *req.Decision)
	}
	return apperr.New(apperr.ApprovalAlreadyResolved, "approval request %q is no longer pending (its turn ended)", req.ID)
}

// approvalRows stores the requests Codex asks a person to decide and
// their answers.
type approvalRows struct {
	store   *store.Store
	changes *changes
	now     func() time.Time
	own     owner
}

// requested stores a request and tells subscribers.
func (ar *approvalRows) requested(ctx context.Context, a *ent.AgentSession, r agent.ApprovalRequest) error {
	if r.ID == "" {
		return errors.New("approval request without an id")
	}
	decisions := make([]string, 0, len(r.AvailableDecisions))
	for _, d := range r.AvailableDecisions {
		decisions = append(decisions, string(d))
	}
	created := r.CreatedAt
	if created.IsZero() {
		created = ar.now()
	}
	return ar.changes.commit(ctx, func(c *ent.Client) ([]activity.Event, error) {
		row, err := c.ApprovalRequest.Create().
			SetID(r.ID).SetAgentSessionID(a.ID).SetWorkspaceID(a.WorkspaceID).
			SetTurnID(r.TurnID).SetItemID(r.ItemID).SetKind(approvalrequest.Kind(r.Kind)).
			SetMethod(r.Method).SetCommand(r.Command).SetCwd(r.Cwd).SetReason(r.Reason).
			SetDetails(r.Details).SetAvailableDecisions(decisions).SetCreatedAt(created).
			Save(ctx)
		if err != nil {
			return nil, err
		}
		return []activity.Event{{Kind: activity.ApprovalRequested, WorkspaceID: a.WorkspaceID, AgentSessionID: a.ID, Approval: row}}, nil
	})
}

// resolve records a resolution once: the first writer wins (the
// person's answer, or the provider's settling it), and only it publishes.
// It returns the row as stored.
func (ar *approvalRows) resolve(ctx context.Context, a *ent.AgentSession, id string, d agent.ApprovalDecision, by string) (*ent.ApprovalRequest, error) {
	var row *ent.ApprovalRequest
	err := ar.changes.commit(ctx, func(c *ent.Client) ([]activity.Event, error) {
		n, err := c.ApprovalRequest.Update().
			Where(approvalrequest.ID(id), approvalrequest.AgentSessionID(a.ID), approvalrequest.ResolvedAtIsNil()).
			SetDecision(approvalrequest.Decision(d)).SetResolvedAt(ar.now()).SetResolvedBy(by).
			Save(ctx)
		if err != nil {
			return nil, err
		}
		row, err = c.ApprovalRequest.Get(ctx, id)
		if ent.IsNotFound(err) {
			row = nil
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, nil
		}
		return []activity.Event{{Kind: activity.ApprovalResolved, WorkspaceID: a.WorkspaceID, AgentSessionID: a.ID, Approval: row}}, nil
	})
	if err != nil {
		return nil, apperr.Storage(err, "record the approval decision")
	}
	if row != nil && ar.changes.outbox != nil {
		row = row.Unwrap() // the transaction's: the caller may query through it
	}
	return row, nil
}

// cancelPending resolves as CANCEL the requests still pending in
// a turn that ended (or, with turnID "", in the whole session).
func (ar *approvalRows) cancelPending(ctx context.Context, a *ent.AgentSession, turnID, by string) error {
	q := ar.store.Client.ApprovalRequest.Query().
		Where(approvalrequest.AgentSessionID(a.ID), approvalrequest.ResolvedAtIsNil())
	if turnID != "" {
		q = q.Where(approvalrequest.TurnID(turnID))
	}
	ids, err := q.IDs(ctx)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if _, err := ar.resolve(ctx, a, id, agent.DecisionCancel, by); err != nil {
			return err
		}
	}
	return nil
}

// cancelOfPreviousRun resolves as CANCEL every request left
// pending by the previous process: its Codex child, which asked, is gone.
func (ar *approvalRows) cancelOfPreviousRun(ctx context.Context, now time.Time) (int, error) {
	n, err := ar.store.Client.ApprovalRequest.Update().Where(approvalrequest.ResolvedAtIsNil()).Where(ar.own.approvals()...).
		SetDecision(approvalrequest.DecisionCANCEL).SetResolvedAt(now).SetResolvedBy("restart").
		Save(ctx)
	if err != nil {
		return 0, apperr.Storage(err, "cancel the approval requests of the previous run")
	}
	return n, nil
}
