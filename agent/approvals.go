package agent

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Approver is the part of a Runtime that lets a person answer what the
// provider asks (an approval, a question) while a turn waits.
type Approver interface {
	// RespondToApproval sends a person's decision for a pending request.
	// It fails with ErrApprovalNotPending when the runtime no longer waits
	// for it (answered, or its turn ended).
	RespondToApproval(ctx context.Context, in ApprovalResponse) error
}

// ErrApprovalNotPending: the request was already resolved, or is unknown to
// the running provider (its turn ended, the provider restarted).
var ErrApprovalNotPending = errors.New("approval request is not pending")

// ApprovalKind says what a request asks. The values are the GraphQL
// ApprovalKind names.
type ApprovalKind string

const (
	ApprovalCommand        ApprovalKind = "COMMAND"
	ApprovalFileChange     ApprovalKind = "FILE_CHANGE"
	ApprovalPermissions    ApprovalKind = "PERMISSIONS"
	ApprovalUserInput      ApprovalKind = "USER_INPUT"
	ApprovalMCPElicitation ApprovalKind = "MCP_ELICITATION"
)

// ApprovalDecision is a person's (or a policy's) answer. The values are the
// GraphQL ApprovalDecision names.
type ApprovalDecision string

const (
	DecisionAccept           ApprovalDecision = "ACCEPT"
	DecisionAcceptForSession ApprovalDecision = "ACCEPT_FOR_SESSION"
	DecisionAcceptAlways     ApprovalDecision = "ACCEPT_ALWAYS"
	DecisionDecline          ApprovalDecision = "DECLINE"
	DecisionCancel           ApprovalDecision = "CANCEL"
)

// ApprovalDecisions lists every decision, in the order the GraphQL enum has.
func ApprovalDecisions() []ApprovalDecision {
	return []ApprovalDecision{DecisionAccept, DecisionAcceptForSession, DecisionAcceptAlways, DecisionDecline, DecisionCancel}
}

// ApprovalRequest is a provider's request waiting for a person.
type ApprovalRequest struct {
	// ID is the runtime's own id for the request (providers' ids are not
	// unique across restarts).
	ID       string
	ThreadID string
	TurnID   string
	ItemID   string
	Kind     ApprovalKind
	Command  string
	Cwd      string
	Reason   string
	// Method is the provider's request method.
	Method string
	// Details is the provider's whole request params.
	Details            json.RawMessage
	AvailableDecisions []ApprovalDecision
	CreatedAt          time.Time
}

// ApprovalResolution says how a request ended.
type ApprovalResolution struct {
	ID       string
	Decision ApprovalDecision
	// By: "user", or why the runtime settled it itself ("turn_ended",
	// "runtime_exit", "provider").
	By string
}

// ApprovalResponse is a person's answer to a pending request.
type ApprovalResponse struct {
	Provider string
	ID       string
	Decision ApprovalDecision
	// Answers, for USER_INPUT and MCP_ELICITATION accepted: the content to
	// send (question id -> list of answers; the elicitation's form content).
	Answers json.RawMessage
}

// ErrApprovalDecisionNotOffered: the decision is not among the request's
// AvailableDecisions.
var ErrApprovalDecisionNotOffered = errors.New("decision not offered for this request")
