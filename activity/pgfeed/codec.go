package pgfeed

import (
	"encoding/json"
	"fmt"
	"time"

	"tuttid/activity"
	"tuttid/agent"
	"tuttid/ent"
)

// wire is an event as stored: what another instance needs to hand it out
// (Seq and At are columns of their own).
type wire struct {
	Kind           activity.Kind        `json:"kind"`
	WorkspaceID    string               `json:"workspace_id"`
	AgentSessionID string               `json:"agent_session_id,omitempty"`
	Session        *ent.AgentSession    `json:"session,omitempty"`
	Turn           *ent.Turn            `json:"turn,omitempty"`
	Message        *ent.Message         `json:"message,omitempty"`
	Fork           *ent.SessionFork     `json:"fork,omitempty"`
	Approval       *ent.ApprovalRequest `json:"approval,omitempty"`
	Account        *agent.Account       `json:"account,omitempty"`
	Error          string               `json:"error,omitempty"`
	Delta          string               `json:"delta,omitempty"`
	ItemID         string               `json:"item_id,omitempty"`
	DeltaKind      string               `json:"delta_kind,omitempty"`
	Notice         string               `json:"notice,omitempty"`
	NoticeKind     string               `json:"notice_kind,omitempty"`
	ExplorationID  string               `json:"exploration_id,omitempty"`
	CheckRun       *ent.CheckRun        `json:"check_run,omitempty"`
}

// encode is the stored payload of e.
func encode(e activity.Event) ([]byte, error) {
	b, err := json.Marshal(wire{
		Kind: e.Kind, WorkspaceID: e.WorkspaceID, AgentSessionID: e.AgentSessionID,
		Session: e.Session, Turn: e.Turn, Message: e.Message, Fork: e.Fork, Approval: e.Approval,
		Account: e.Account, Error: e.Error, Delta: e.Delta, ItemID: e.ItemID, DeltaKind: e.DeltaKind,
		Notice: e.Notice, NoticeKind: e.NoticeKind, ExplorationID: e.ExplorationID, CheckRun: e.CheckRun,
	})
	if err != nil {
		return nil, fmt.Errorf("encode activity event %s: %w", e.Kind, err)
	}
	return b, nil
}

// decode is the event stored as payload with its seq and time.
func decode(seq int64, at time.Time, payload []byte) (activity.Event, error) {
	var w wire
	if err := json.Unmarshal(payload, &w); err != nil {
		return activity.Event{}, fmt.Errorf("decode activity event %d: %w", seq, err)
	}
	return activity.Event{
		Seq: seq, At: at, Kind: w.Kind, WorkspaceID: w.WorkspaceID, AgentSessionID: w.AgentSessionID,
		Session: w.Session, Turn: w.Turn, Message: w.Message, Fork: w.Fork, Approval: w.Approval,
		Account: w.Account, Error: w.Error, Delta: w.Delta, ItemID: w.ItemID, DeltaKind: w.DeltaKind,
		Notice: w.Notice, NoticeKind: w.NoticeKind, ExplorationID: w.ExplorationID, CheckRun: w.CheckRun,
	}, nil
}
