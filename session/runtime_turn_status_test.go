package session

import (
	"testing"

	"tuttid/agent"
	"tuttid/ent/turn"
)

func TestTurnStatusOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in    agent.TurnStatus
		want  turn.Status
		ended bool
	}{
		{agent.TurnCompleted, turn.StatusCOMPLETED, true},
		{agent.TurnInterrupted, turn.StatusINTERRUPTED, true},
		{agent.TurnFailed, turn.StatusFAILED, true},
		{agent.TurnInProgress, turn.StatusIN_PROGRESS, false},
		{"", turn.StatusIN_PROGRESS, false},
	} {
		if got, ended := TurnStatusOf(tc.in); got != tc.want || ended != tc.ended {
			t.Errorf("TurnStatusOf(%q) = %s, %v; want %s, %v", tc.in, got, ended, tc.want, tc.ended)
		}
	}
}

func TestItemEnd(t *testing.T) {
	t.Parallel()
	for status, want := range map[turn.Status]string{
		turn.StatusCOMPLETED:   agent.ItemCompleted,
		turn.StatusINTERRUPTED: agent.ItemInterrupted,
		turn.StatusFAILED:      agent.ItemFailed,
		turn.StatusIN_PROGRESS: agent.ItemInProgress,
	} {
		if got := itemEnd(status); got != want {
			t.Errorf("itemEnd(%s) = %q, want %q", status, got, want)
		}
	}
}
