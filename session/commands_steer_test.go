package session

import (
	"context"
	"fmt"
	"testing"

	"tuttid/agent"
	"tuttid/apperr"
)

// TestSteer: the running turn is steered through the runtime; a finished
// turn, or one Codex no longer runs, is agent.turn_not_running (409).
func TestSteer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, turnID, text string
		runtimeErr         error
		want               apperr.Code // "" success
	}{
		{"running", "running", "also add tests", nil, ""},
		{"finished", "done", "also", nil, apperr.TurnNotRunning},
		{"not running at Codex", "running", "also", fmt.Errorf("%w: no active turn to steer", agent.ErrTurnNotRunning), apperr.TurnNotRunning},
		{"unknown turn", "nope", "also", nil, apperr.TurnNotFound},
		{"empty text", "running", "  ", nil, apperr.InvalidInput},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, _, rt, _ := accountEnv(t)
			rt.FailSteers(tc.runtimeErr)
			tr, err := e.svc.Steer(context.Background(), SteerInput{WorkspaceID: "w", SessionID: "s1", TurnID: tc.turnID, Text: tc.text})
			if got := codeOrEmpty(err); got != tc.want {
				t.Fatalf("Steer = %v; want code %q", err, tc.want)
			}
			if tc.want == apperr.TurnNotRunning && apperr.CodeOf(err).HTTPStatus() != 409 {
				t.Errorf("status %d, want 409", apperr.CodeOf(err).HTTPStatus())
			}
			if tc.want != "" {
				return
			}
			steers := rt.Steers()
			if tr == nil || tr.TurnID != "running" || len(steers) != 1 ||
				steers[0] != (agent.SteerInput{Provider: agent.ProviderCodex, ThreadID: "thread-1", TurnID: "running", Text: tc.text}) {
				t.Errorf("turn %+v, steers %+v", tr, steers)
			}
		})
	}
}

func codeOrEmpty(err error) apperr.Code {
	if err == nil {
		return ""
	}
	return apperr.CodeOf(err)
}
