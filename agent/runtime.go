// Package agent defines the provider-neutral runtime contract that the
// session and fork services call. Providers (today only Codex, in package
// codex) implement Runtime; nothing here knows about storage or GraphQL.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"time"
)

// ProviderCodex is the only provider of the first version.
const ProviderCodex = "codex"

// Runtime is the spec's RuntimeController: it drives provider threads.
// Every method fails with an error wrapping ErrRuntimeUnavailable while the
// provider process cannot be reached, and with ErrUnsupportedProvider for a
// provider it does not implement.
type Runtime interface {
	// Start creates a provider thread for a new session.
	Start(ctx context.Context, in StartInput) (RuntimeSession, error)
	// SendTurn starts a turn and returns as soon as the provider accepted it;
	// progress arrives on Events.
	SendTurn(ctx context.Context, in SendTurnInput) (RuntimeTurn, error)
	// Interrupt stops an active turn.
	Interrupt(ctx context.Context, in InterruptInput) error
	// History reads a thread's turns, with their items, oldest first.
	History(ctx context.Context, in HistoryInput) ([]RuntimeTurn, error)
	// Fork creates a child thread holding the parent's history through
	// LastTurnID (all of it when empty).
	Fork(ctx context.Context, in RuntimeForkInput) (RuntimeForkResult, error)
	// Inject appends a user message to a thread's history without
	// starting a turn: the thread's next turn sees it (Codex:
	// thread/inject_items). The thread must not be running a turn.
	Inject(ctx context.Context, in InjectInput) error
	// Review has the provider review the code in a thread's cwd and
	// returns the review's text once it ended (Codex: review/start on a
	// throwaway fork of the thread, since a review becomes part of the
	// thread it runs on; read-only, never asking).
	Review(ctx context.Context, in ReviewInput) (string, error)
	// Archive removes a provider thread (a deleted session, or an orphan
	// left by a fork whose persistence failed).
	Archive(ctx context.Context, provider, threadID string) error
	// Events delivers what the provider reports about its threads, in the
	// order it reported it. The channel is closed when the runtime stops.
	Events() <-chan Event
	// Health says whether the provider process is reachable now.
	Health(ctx context.Context) error
	Approver
}

// ComposerSettings are a session's effective settings.
type ComposerSettings struct {
	Model            string `json:"model,omitempty"`
	ReasoningEffort  string `json:"reasoningEffort,omitempty"`
	PermissionModeID string `json:"permissionModeId,omitempty"`
	PlanMode         bool   `json:"planMode"`
	BrowserUse       bool   `json:"browserUse"`
	ComputerUse      bool   `json:"computerUse"`
}

// Permission modes a session can run in (ComposerSettings.PermissionModeID).
const (
	// PermissionReadOnly: the sandbox is read-only; no approval is asked and
	// any approval request is declined.
	PermissionReadOnly = "read-only"
	// PermissionWorkspaceWrite (the default): writes inside the workspace;
	// what needs more is asked of the session's person (see Approver).
	PermissionWorkspaceWrite = "workspace-write"
	// PermissionFullAccess: no sandbox, every approval request is accepted.
	PermissionFullAccess = "full-access"
)

// ComputerUseUnsupported says why ComposerSettings.ComputerUse is refused.
const ComputerUseUnsupported = "computerUse is not supported: Codex's computer_use feature drives desktop apps " +
	"through the Codex desktop client and does nothing in the app-server tuttid runs"

// ReasoningEfforts lists the accepted ComposerSettings.ReasoningEffort values.
func ReasoningEfforts() []string {
	return []string{"none", "minimal", "low", "medium", "high", "xhigh"}
}

// PermissionModes lists the accepted ComposerSettings.PermissionModeID values.
func PermissionModes() []string {
	return []string{PermissionReadOnly, PermissionWorkspaceWrite, PermissionFullAccess}
}

// ThreadStatus is a provider thread's state as the provider reports it.
type ThreadStatus string

const (
	ThreadIdle        ThreadStatus = "idle"
	ThreadActive      ThreadStatus = "active"
	ThreadSystemError ThreadStatus = "systemError"
	ThreadNotLoaded   ThreadStatus = "notLoaded"
)

// TurnStatus is a turn's state.
type TurnStatus string

const (
	TurnInProgress  TurnStatus = "IN_PROGRESS"
	TurnCompleted   TurnStatus = "COMPLETED"
	TurnInterrupted TurnStatus = "INTERRUPTED"
	TurnFailed      TurnStatus = "FAILED"
)

// StartInput starts a provider thread.
type StartInput struct {
	Provider string
	Cwd      string
	Settings ComposerSettings
	// ModelProvider, when known, is the provider's model provider to use
	// (Codex's modelProvider); empty lets the provider's config decide.
	ModelProvider string
}

// SendTurnInput starts a turn on an existing thread.
type SendTurnInput struct {
	Provider string
	ThreadID string
	Cwd      string
	Settings ComposerSettings
	Text     string
	// ModelProvider, when known, is sent if the thread must be resumed.
	ModelProvider string
}

// InjectInput is a message appended to a thread's history (Inject); the
// thread's settings and cwd are those a resume needs.
type InjectInput struct {
	Provider      string
	ThreadID      string
	Cwd           string
	Settings      ComposerSettings
	ModelProvider string
	Text          string
}

// ReviewInput is a review of the code in a thread's cwd.
type ReviewInput struct {
	Provider      string
	ThreadID      string
	Cwd           string
	Settings      ComposerSettings
	ModelProvider string
	// Instructions say what to review (Codex's custom review target).
	Instructions string
}

// InterruptInput stops an active turn.
type InterruptInput struct {
	Provider string
	ThreadID string
	TurnID   string
}

// HistoryInput reads a thread's turns.
type HistoryInput struct {
	Provider string
	ThreadID string
	// TurnIDs, when set, are the only turns wanted: the runtime may read
	// newest first and stop once it has them all, and returns just those
	// (in any order), so that settling a session's last turn does not
	// read, or hold, its whole history.
	TurnIDs []string
}

// RuntimeForkInput is the spec's fork input.
type RuntimeForkInput struct {
	WorkspaceID     string
	ParentSessionID string
	ChildSessionID  string
	Provider        string
	ParentThreadID  string
	Cwd             string
	Settings        ComposerSettings
	// ModelProvider is the parent's model provider, when known.
	ModelProvider string
	LastTurnID    string
	Title         string
	Visible       *bool
	// HistoryBytesHint is about how many bytes of items the caller expects
	// the child's history to hold (the parent's cached items), 0 when
	// unknown: a provider may size its first history read from it.
	HistoryBytesHint int64
	// OnLateThread, when set, is called (once, on its own goroutine) with
	// the thread a fork made when the provider answers after the call
	// failed with ErrRequestLost (it timed out).
	OnLateThread func(threadID string)
}

// RuntimeForkResult is what a provider fork produced.
type RuntimeForkResult struct {
	Session RuntimeSession
	// History streams the child's provider history through the fork
	// boundary, a page at a time, so that no whole history is ever held in
	// memory (the fork service spools it to local disk before its
	// transaction). Nil when the provider could not offer it; a stream that
	// fails (an error other than io.EOF, such as ErrHistoryUnavailable)
	// means the same. Either way the service copies the parent's cached
	// messages instead. The caller closes it.
	History HistoryStream
	// EmptyParent: the parent had no history to fork, and the child is a
	// new thread with the same settings.
	EmptyParent bool
	Fork        RuntimeForkLineage
}

// HistoryStream yields a thread's turns oldest first, a page at a time.
type HistoryStream interface {
	// Next returns the next page of turns (each with its messages), or
	// io.EOF after the last page. An empty history is the thread's true
	// history only when Next returns io.EOF; a provider that cannot vouch
	// for it (Codex: an empty child of a parent that is not empty) fails
	// with ErrHistoryUnavailable instead.
	Next(ctx context.Context) ([]RuntimeTurn, error)
	// Close releases the stream and whatever read it has in flight.
	Close()
}

// LocalHistory is a HistoryStream already on local disk
// (historyspool.Stream: the codex runtime spools a streamed fork reply as
// it arrives). The fork service reads it inside the child's transaction
// without spooling it again, and takes a failure to read it as one of
// local storage, not of the provider.
type LocalHistory interface {
	HistoryStream
	OnLocalDisk() bool
}

// SliceHistory is a HistoryStream over turns already in memory, one page
// of pageSize turns at a time (all in one page when pageSize <= 0): for
// providers and tests whose history is small and known up front.
func SliceHistory(turns []RuntimeTurn, pageSize int) HistoryStream {
	if pageSize <= 0 {
		pageSize = max(len(turns), 1)
	}
	return &sliceHistory{turns: turns, size: pageSize}
}

type sliceHistory struct {
	turns []RuntimeTurn
	size  int
}

func (s *sliceHistory) Next(context.Context) ([]RuntimeTurn, error) {
	if len(s.turns) == 0 {
		return nil, io.EOF
	}
	n := min(s.size, len(s.turns))
	page := s.turns[:n]
	s.turns = s.turns[n:]
	return page, nil
}

func (s *sliceHistory) Close() { s.turns = nil }

// ReadHistory drains a stream into one slice: only for callers that need
// the whole of a small history (tests, diagnostics), never the fork path.
func ReadHistory(ctx context.Context, h HistoryStream) ([]RuntimeTurn, error) {
	defer h.Close()
	var out []RuntimeTurn
	for {
		page, err := h.Next(ctx)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, page...)
	}
}

// RuntimeForkLineage records where a provider thread came from.
type RuntimeForkLineage struct {
	ParentThreadID string
	ChildThreadID  string
	Provider       string
	LastTurnID     string
	ForkedAt       time.Time
}

// RuntimeSession is a provider thread as the provider describes it.
type RuntimeSession struct {
	ThreadID      string
	Status        ThreadStatus
	Cwd           string
	Model         string
	ModelProvider string
	ForkedFromID  string
}

// RuntimeTurn is one turn of a thread.
type RuntimeTurn struct {
	ID     string
	Status TurnStatus
	Error  string
	// ErrorCode is the provider's kind of failure (TurnFailure.Code).
	ErrorCode string
	Messages  []RuntimeMessage
}

// RuntimeMessage is one provider item projected to the form tuttid stores
// in workspace_agent_messages.
type RuntimeMessage struct {
	// ID is the provider's item id; unique within a session.
	ID     string
	TurnID string
	// Role is what the GUI shows: user, assistant, reasoning, tool,
	// file_change, plan, system, or the provider's item type for the rest.
	Role string
	// Kind is the provider's own item type (for Codex: agentMessage, ...).
	Kind string
	Text string
	// Content is the provider's whole item, kept as typed JSON.
	Content json.RawMessage
	// Status: in_progress, completed, failed, declined, ...
	Status string
}

// EventKind names what an Event reports.
type EventKind string

const (
	EventThreadStatus  EventKind = "thread_status"
	EventTurnStarted   EventKind = "turn_started"
	EventTurnCompleted EventKind = "turn_completed"
	EventItemStarted   EventKind = "item_started"
	EventItemCompleted EventKind = "item_completed"
	EventMessageDelta  EventKind = "message_delta"
	// EventRuntimeRestarted: the provider process came back after a crash;
	// turns that were running are lost (they arrive as EventTurnCompleted
	// with TurnFailed first).
	EventRuntimeRestarted EventKind = "runtime_restarted"
	// EventApprovalRequested: the provider waits for a person (Approval).
	EventApprovalRequested EventKind = "approval_requested"
	// EventApprovalResolved: a request was answered or settled (Resolution).
	EventApprovalResolved EventKind = "approval_resolved"
	// EventOther carries a provider notification tuttid does not project,
	// so that nothing is dropped silently.
	EventOther EventKind = "other"
)

// Event is one thing a provider reported about a thread.
type Event struct {
	Kind     EventKind
	Provider string
	ThreadID string
	TurnID   string
	// Status is set for thread_status (a ThreadStatus) and turn_completed
	// (a TurnStatus).
	Status  string
	Error   string
	Message *RuntimeMessage // item_started, item_completed
	ItemID  string          // message_delta
	Delta   string          // message_delta
	Method  string          // the provider's notification method
	Raw     json.RawMessage // the provider's params, for EventOther
	// ItemKind is the provider's item type a message_delta belongs to
	// (agentMessage, commandExecution, reasoning, ...).
	ItemKind   string
	Approval   *ApprovalRequest    // approval_requested
	Resolution *ApprovalResolution // approval_resolved
	// Failure says why: a failed turn_completed (Error repeats its
	// message), turn_retrying.
	Failure    *TurnFailure
	TokenUsage *TokenUsage // token_usage
	Account    *Account    // account_updated
	LoginID    string      // account_updated after a login
	RateLimits *RateLimits // rate_limits
	Notice     string      // warning: the provider's text
}
