package codex

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"tuttid/agent"
)

// Steer implements agent.Steerer: turn/steer adds the text to the running
// turn as a userMessage item of that turn (reported as item events like
// any other); the next model request of the turn carries it. expectedTurnId
// makes Codex refuse a turn that is no longer the running one.
func (r *Runtime) Steer(ctx context.Context, in agent.SteerInput) error {
	if err := checkProvider(in.Provider); err != nil {
		return err
	}
	if strings.TrimSpace(in.Text) == "" {
		return fmt.Errorf("%w: steering needs text", agent.ErrInvalidSettings)
	}
	p, err := r.current()
	if err != nil {
		return err
	}
	params := map[string]any{
		"threadId":       in.ThreadID,
		"expectedTurnId": in.TurnID,
		"input":          []textInput{{Type: "text", Text: in.Text}},
	}
	var resp wireSteerResponse
	err = r.call(ctx, p, "turn/steer", params, &resp)
	var pe *agent.ProviderError
	if errors.As(err, &pe) && steerRefused(pe) {
		return fmt.Errorf("%w: %w", agent.ErrTurnNotRunning, err)
	}
	return err
}

// steerRefused says whether Codex refused turn/steer because the turn is
// not the one running (no active turn, another turn, a thread not loaded).
func steerRefused(pe *agent.ProviderError) bool {
	if errors.Is(pe, agent.ErrTurnNotFound) || errors.Is(pe, agent.ErrThreadNotFound) {
		return true
	}
	msg := strings.ToLower(pe.Message)
	for _, s := range []string{"no active turn", "expected active turn", "expectedturnid", "not steerable"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
