package session

import (
	"tuttid/agent"
	"tuttid/ent/turn"
)

// TurnStatusOf is the one mapping from a provider's turn status to
// tuttid's. ended is false for a turn the provider reports in progress (or
// in a status tuttid does not know): what that means depends on who asks
// (an ingested completion, a fork's child, a turn left by a crash), so
// the caller decides.
func TurnStatusOf(s agent.TurnStatus) (status turn.Status, ended bool) {
	switch s {
	case agent.TurnCompleted:
		return turn.StatusCOMPLETED, true
	case agent.TurnInterrupted:
		return turn.StatusINTERRUPTED, true
	case agent.TurnFailed:
		return turn.StatusFAILED, true
	}
	return turn.StatusIN_PROGRESS, false
}

// itemEnd is the status a turn's items still in progress take when the
// turn ends in status: its own, in the item statuses' spelling.
func itemEnd(status turn.Status) string {
	switch status {
	case turn.StatusCOMPLETED:
		return agent.ItemCompleted
	case turn.StatusINTERRUPTED:
		return agent.ItemInterrupted
	case turn.StatusFAILED:
		return agent.ItemFailed
	}
	return agent.ItemInProgress
}
