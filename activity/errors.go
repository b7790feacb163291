package activity

import (
	"errors"
	"fmt"
)

var (
	// ErrResyncRequired is matched (errors.Is) by every *ResyncError: the
	// subscriber cannot be brought up to date from the broker and must
	// reload state from queries.
	ErrResyncRequired = errors.New("activity: resync required")
	// ErrClosed is returned by Subscribe after Close.
	ErrClosed = errors.New("activity: broker closed")
	// ErrNoWorkspace is returned by Subscribe when Filter.WorkspaceID is empty.
	ErrNoWorkspace = errors.New("activity: workspace ID required")
)

// Reason says why a resync is required.
type Reason string

const (
	// ReasonDropped: the subscriber fell more than Options.Buffer events
	// behind and was removed.
	ReasonDropped Reason = "dropped"
	// ReasonTooOld: AfterSeq is older than the retained window.
	ReasonTooOld Reason = "too_old"
	// ReasonUnknownSeq: AfterSeq was never issued by this process (negative,
	// or ahead of the latest sequence, e.g. seen before a server restart).
	ReasonUnknownSeq Reason = "unknown_seq"
	// ReasonMissed: a shared feed could not read some events of the
	// workspace before they were pruned (this instance was cut off from
	// the database for longer than the retention), so its subscribers
	// cannot be brought up to date.
	ReasonMissed Reason = "missed"
)

// ResyncError is returned by Subscribe, and by Event.Err on a Resync event,
// when the subscriber cannot resume from the broker alone.
type ResyncError struct {
	Reason      Reason
	WorkspaceID string
	// AfterSeq is the last sequence the subscriber had (requested or
	// received).
	AfterSeq int64
	// Oldest and Latest bound the window at that moment (Oldest > Latest
	// when it is empty); Oldest-1 is the smallest AfterSeq that can resume.
	Oldest, Latest int64
}

func (e *ResyncError) Error() string {
	switch e.Reason {
	case ReasonDropped:
		return fmt.Sprintf("activity: subscriber fell behind in workspace %s after seq %d and was dropped; reload state and resubscribe", e.WorkspaceID, e.AfterSeq)
	case ReasonTooOld:
		return fmt.Sprintf("activity: cannot resume workspace %s after seq %d: only seq %d..%d are retained; reload state and resubscribe", e.WorkspaceID, e.AfterSeq, e.Oldest, e.Latest)
	case ReasonMissed:
		return fmt.Sprintf("activity: events of workspace %s after seq %d were missed (only %d on could be read); reload state and resubscribe", e.WorkspaceID, e.AfterSeq, e.Oldest)
	default:
		return fmt.Sprintf("activity: cannot resume workspace %s after seq %d: latest is %d (server restarted?); reload state and resubscribe", e.WorkspaceID, e.AfterSeq, e.Latest)
	}
}

// Is makes errors.Is(err, ErrResyncRequired) true.
func (e *ResyncError) Is(target error) bool { return target == ErrResyncRequired }
