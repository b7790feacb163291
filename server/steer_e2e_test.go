package server_test

import (
	"slices"
	"testing"
	"time"

	"tuttid/codex/codextest"
)

// TestSteerTurnE2E: steering a running turn on the real Codex adds the
// text to that turn without stopping it: the model's next request of the
// turn carries it, the turn completes, and the text is stored as a user
// message of the turn. A finished turn is agent.turn_not_running.
func TestSteerTurnE2E(t *testing.T) {
	h := startServer(t, harnessOpts{})
	const slow, steer = "work slowly", "and add a test"
	h.model.SetReply(func(r codextest.Request) codextest.Reply {
		if r.LastUserText() == slow {
			return codextest.Reply{Text: "working", Delay: 20 * time.Second}
		}
		return codextest.DefaultReply(r)
	})
	ws := h.createWorkspace("w")
	s := h.startSession(ws, "steer")
	var sent struct{ SendMessage struct{ ID string } }
	h.must(`mutation($in: SendMessageInput!) { sendMessage(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": s.ID, "text": slow}}, &sent)
	turnID := sent.SendMessage.ID
	h.eventually("the slow model request", 20*time.Second, func() bool { return len(h.model.RequestsFor(s.ProviderSessionID)) > 0 })

	const steerQ = `mutation($in: SteerTurnInput!) { steerTurn(input: $in) { id status } }`
	vars := map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": s.ID, "turnId": turnID, "text": steer}}
	var out struct{ SteerTurn struct{ ID, Status string } }
	started := time.Now()
	h.must(steerQ, vars, &out)
	if out.SteerTurn.ID != turnID || out.SteerTurn.Status != "IN_PROGRESS" {
		t.Errorf("steerTurn = %+v", out.SteerTurn)
	}
	view := h.waitTurn(ws, s.ID, turnID, "COMPLETED")
	if took := time.Since(started); took > 15*time.Second {
		t.Errorf("the steered turn took %v: the slow request was not cut short", took)
	}
	reqs := h.model.RequestsFor(s.ProviderSessionID)
	if last := reqs[len(reqs)-1]; !slices.Contains(last.UserTexts(), steer) {
		t.Errorf("the model's last request has user texts %q, want the steer text too", last.UserTexts())
	}
	var users []string
	for _, tr := range view.Turns {
		if tr.ID != turnID {
			continue
		}
		for _, m := range tr.Messages {
			if m.Role == "user" {
				users = append(users, m.Text)
			}
		}
	}
	if !slices.Contains(users, slow) || !slices.Contains(users, steer) {
		t.Errorf("the turn's user messages = %q, want %q and %q", users, slow, steer)
	}
	if errs := h.do(steerQ, vars, nil); len(errs) != 1 || errs[0].Code() != "agent.turn_not_running" {
		t.Errorf("steering the finished turn = %+v, want agent.turn_not_running", errs)
	}
}
