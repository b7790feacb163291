package activity

import (
	"context"
	"time"

	"tuttid/agent"
	"tuttid/ent"
)

// Kind says what happened. gqlgen.yml binds the GraphQL ActivityKind enum
// to these values (Resync is RESYNC_REQUIRED).
type Kind string

const (
	SessionCreated Kind = "SESSION_CREATED"
	SessionUpdated Kind = "SESSION_UPDATED"
	SessionForked  Kind = "SESSION_FORKED"
	SessionDeleted Kind = "SESSION_DELETED"
	TurnStarted    Kind = "TURN_STARTED"
	TurnCompleted  Kind = "TURN_COMPLETED"
	MessageAdded   Kind = "MESSAGE_ADDED"
	MessageUpdated Kind = "MESSAGE_UPDATED"
	MessageDelta   Kind = "MESSAGE_DELTA"
	// ApprovalRequested: the provider waits for the session's person.
	ApprovalRequested Kind = "APPROVAL_REQUESTED"
	// ApprovalResolved: a request was answered, or cancelled with its turn.
	ApprovalResolved Kind = "APPROVAL_RESOLVED"
	// TurnRetrying: the provider retries a failed model request of the
	// running turn (Turn; Error is the provider's message).
	TurnRetrying Kind = "TURN_RETRYING"
	// TokenUsageUpdated: a session's token usage changed (Session).
	TokenUsageUpdated Kind = "TOKEN_USAGE_UPDATED"
	// AccountUpdated: the provider's account changed, a login completed or
	// failed (Account; Error for a failed login). It belongs to no session
	// and reaches every subscription of the workspace.
	AccountUpdated Kind = "ACCOUNT_UPDATED"
	// ProviderWarning: the provider warned the person (Notice, NoticeKind):
	// about one session's thread (AgentSessionID), or about its
	// configuration, reaching every subscription of every workspace.
	ProviderWarning Kind = "PROVIDER_WARNING"
	// ExplorationUpdated: an exploration of the session (ExplorationID)
	// changed: a branch forked, failed, was queued or started, a check
	// ended, a winner was marked, a branch applied or archived.
	ExplorationUpdated Kind = "EXPLORATION_UPDATED"
	// CheckUpdated: a check of the session's turn started or ended
	// (CheckRun).
	CheckUpdated Kind = "CHECK_UPDATED"

	// Subscribed is never published: it is the first event of every
	// subscription, put in its channel when the subscription is registered,
	// so that a client knows from then on it misses nothing. Its Seq is the
	// seq the subscription continues after: the workspace's latest for a
	// live subscription (every later event has a larger one, and everything
	// up to it is committed and readable), Filter.AfterSeq for a resumed one
	// (the replay follows). Either way it is a valid AfterSeq to resume from.
	Subscribed Kind = "SUBSCRIBED"

	// Resync is not an ActivityKind and is never published: it is the last
	// event of a subscription the broker dropped because its reader fell
	// behind. Event.Err describes it; the client must reload state from
	// queries, or resubscribe with AfterSeq = Seq while the window still
	// holds what it missed.
	Resync Kind = "RESYNC"
)

// Event is one change in a workspace, published after the store committed it.
//
// Events are immutable once published: the broker hands the same ent
// pointers to every subscriber and keeps them in the replay window, so
// neither publishers nor subscribers may modify them (or the ent entities
// they point to) afterwards.
type Event struct {
	// Seq increases by one per published event of a workspace, starting at
	// 1; assigned by Publish. For a Resync event it is the seq of the last
	// event it follows (the one before the first missed), so resuming with
	// AfterSeq = Seq of the last event received is right for every kind.
	Seq            int64
	Kind           Kind
	WorkspaceID    string
	AgentSessionID string

	// Payload, whichever applies to Kind; any may be nil.
	Session *ent.AgentSession
	Turn    *ent.Turn
	Message *ent.Message
	Fork    *ent.SessionFork
	// Approval is set for APPROVAL_REQUESTED and APPROVAL_RESOLVED.
	Approval *ent.ApprovalRequest

	// ExplorationID is set for EXPLORATION_UPDATED; CheckRun for
	// CHECK_UPDATED.
	ExplorationID string
	CheckRun      *ent.CheckRun

	// Account is set for ACCOUNT_UPDATED.
	Account *agent.Account
	// Error is the provider's message of a TURN_RETRYING, or why a login
	// failed (ACCOUNT_UPDATED).
	Error string

	// Notice is the provider's text of a PROVIDER_WARNING; NoticeKind
	// which notification carried it (warning, configWarning,
	// deprecationNotice).
	Notice     string
	NoticeKind string

	// Delta is the appended text of a MESSAGE_DELTA; ItemID names the
	// message/item it belongs to.
	Delta  string
	ItemID string
	// DeltaKind says which stream a MESSAGE_DELTA feeds: the item type
	// (agentMessage, commandExecution, fileChange, plan) or
	// reasoning.summary / reasoning.text.
	DeltaKind string

	// At is when the broker published the event; assigned by Publish.
	At time.Time

	err *ResyncError // set only on Resync events
}

// Err returns a *ResyncError (matching ErrResyncRequired) for a Resync
// event and nil for every other event.
func (e Event) Err() error {
	if e.err == nil {
		return nil
	}
	return e.err
}

// Publisher receives activity after the store commits it: the Broker, or
// pgfeed's feed of several instances. Services take one to publish what
// they changed.
type Publisher interface {
	Publish(ctx context.Context, e Event) Event
}
