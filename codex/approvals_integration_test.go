package codex_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tuttid/agent"
	"tuttid/codex"
	"tuttid/codex/codextest"
)

var workspaceWrite = agent.ComposerSettings{PermissionModeID: agent.PermissionWorkspaceWrite}

// callOnce makes the model call fc once per turn, then answer the call's
// output back as text ("saw: <output>").
func callOnce(fc *codextest.FunctionCall) func(codextest.Request) codextest.Reply {
	return func(r codextest.Request) codextest.Reply {
		if outs := r.FunctionCallOutputs(); len(outs) > 0 && strings.HasPrefix(outs[len(outs)-1].CallID, "call_") {
			last := outs[len(outs)-1]
			if r.HasFunctionCallOutputFor(last.CallID) && !strings.HasPrefix(r.LastUserText(), "again") {
				return codextest.Reply{Text: "saw: " + last.Output}
			}
		}
		return codextest.Reply{FunctionCall: fc}
	}
}

func approvalRequested(e agent.Event) bool { return e.Kind == agent.EventApprovalRequested }

func resolvedAs(id string, d agent.ApprovalDecision) func(agent.Event) bool {
	return func(e agent.Event) bool {
		return e.Kind == agent.EventApprovalResolved && e.Resolution.ID == id && e.Resolution.Decision == d
	}
}

func respond(t *testing.T, g *realRig, id string, d agent.ApprovalDecision) error {
	t.Helper()
	return g.rt.RespondToApproval(rctx(t), agent.ApprovalResponse{Provider: agent.ProviderCodex, ID: id, Decision: d})
}

// lastAssistantText is the text of the turn's last agentMessage item.
func lastAssistantText(g *realRig, turnID string) string {
	text := ""
	for _, e := range g.ev.Events() {
		if e.Kind == agent.EventItemCompleted && e.TurnID == turnID && e.Message.Kind == "agentMessage" {
			text = e.Message.Text
		}
	}
	return text
}

func TestRealApprovalAcceptRunsCommand(t *testing.T) {
	g, _ := newRealRig(t, nil)
	g.model.SetReply(callOnce(codextest.EscalatedCommand("echo approved-output-42", "needs the network")))
	thread := g.start(t, workspaceWrite)
	turn := g.send(t, thread, "run it", workspaceWrite)

	req := g.ev.Wait(t, realWait, "approval request", approvalRequested).Approval
	if req.Kind != agent.ApprovalCommand || req.ThreadID != thread || req.TurnID != turn.ID ||
		!strings.Contains(req.Command, "echo approved-output-42") || req.Reason != "needs the network" || req.ItemID == "" {
		t.Fatalf("request = %+v", req)
	}
	for _, d := range []agent.ApprovalDecision{agent.DecisionAccept, agent.DecisionDecline, agent.DecisionCancel} {
		if !contains(req.AvailableDecisions, d) {
			t.Fatalf("decisions %v lack %s", req.AvailableDecisions, d)
		}
	}
	if err := respond(t, g, req.ID, agent.DecisionAccept); err != nil {
		t.Fatal(err)
	}
	if done := g.ev.Wait(t, realWait, "turn end", codex.TurnDone(turn.ID)); done.Status != string(agent.TurnCompleted) {
		t.Fatalf("turn = %+v", done)
	}
	if got := lastAssistantText(g, turn.ID); !strings.Contains(got, "approved-output-42") {
		t.Fatalf("reply = %q, want the command's output", got)
	}
	g.ev.Wait(t, realWait, "resolution", resolvedAs(req.ID, agent.DecisionAccept))
	if err := respond(t, g, req.ID, agent.DecisionAccept); !errors.Is(err, agent.ErrApprovalNotPending) {
		t.Fatalf("second answer: %v, want ErrApprovalNotPending", err)
	}
}

func TestRealApprovalDeclineSkipsCommand(t *testing.T) {
	g, _ := newRealRig(t, nil)
	marker := filepath.Join(t.TempDir(), "ran")
	g.model.SetReply(callOnce(codextest.EscalatedCommand("touch "+marker, "to mark")))
	thread := g.start(t, workspaceWrite)
	turn := g.send(t, thread, "run it", workspaceWrite)
	req := g.ev.Wait(t, realWait, "approval request", approvalRequested).Approval
	if err := respond(t, g, req.ID, agent.DecisionDecline); err != nil {
		t.Fatal(err)
	}
	if done := g.ev.Wait(t, realWait, "turn end", codex.TurnDone(turn.ID)); done.Status != string(agent.TurnCompleted) {
		t.Fatalf("turn = %+v", done)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("declined command ran: %v", err)
	}
	if got := lastAssistantText(g, turn.ID); !strings.Contains(got, "rejected") {
		t.Fatalf("reply = %q, want the rejection", got)
	}
}

func TestRealApprovalPendingCancelledByInterrupt(t *testing.T) {
	g, _ := newRealRig(t, nil)
	g.model.SetReply(callOnce(codextest.EscalatedCommand("echo never", "why not")))
	thread := g.start(t, workspaceWrite)
	turn := g.send(t, thread, "run it", workspaceWrite)
	req := g.ev.Wait(t, realWait, "approval request", approvalRequested).Approval
	if err := g.rt.Interrupt(rctx(t), agent.InterruptInput{Provider: agent.ProviderCodex, ThreadID: thread, TurnID: turn.ID}); err != nil {
		t.Fatal(err)
	}
	if done := g.ev.Wait(t, realWait, "turn end", codex.TurnDone(turn.ID)); done.Status != string(agent.TurnInterrupted) {
		t.Fatalf("turn = %+v", done)
	}
	res := g.ev.Wait(t, realWait, "cancel", resolvedAs(req.ID, agent.DecisionCancel)).Resolution
	if res.By != "turn_ended" {
		t.Fatalf("resolution = %+v", res)
	}
	if err := respond(t, g, req.ID, agent.DecisionAccept); !errors.Is(err, agent.ErrApprovalNotPending) {
		t.Fatalf("answer after the turn ended: %v", err)
	}
}

func TestRealApprovalFileChange(t *testing.T) {
	g, home := newRealRig(t, nil)
	codextest.AppendConfig(t, home, codextest.StrictWorkspaceWrite)
	target := filepath.Join(t.TempDir(), "outside.txt")
	g.model.SetReply(callOnce(codextest.PatchCommand(target, "hello")))
	thread := g.start(t, workspaceWrite)
	turn := g.send(t, thread, "write it", workspaceWrite)
	req := g.ev.Wait(t, realWait, "approval request", approvalRequested).Approval
	if req.Kind != agent.ApprovalFileChange || req.TurnID != turn.ID || !contains(req.AvailableDecisions, agent.DecisionAcceptForSession) {
		t.Fatalf("request = %+v", req)
	}
	if err := respond(t, g, req.ID, agent.DecisionAccept); err != nil {
		t.Fatal(err)
	}
	if done := g.ev.Wait(t, realWait, "turn end", codex.TurnDone(turn.ID)); done.Status != string(agent.TurnCompleted) {
		t.Fatalf("turn = %+v", done)
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "hello\n" {
		t.Fatalf("file = %q, %v", b, err)
	}
}

// full-access never asks: a write outside the workspace just runs. (An
// escalation request is refused by Codex itself under approval "never".)
func TestRealFullAccessNeverAsks(t *testing.T) {
	g, home := newRealRig(t, nil)
	codextest.AppendConfig(t, home, codextest.StrictWorkspaceWrite)
	marker := filepath.Join(t.TempDir(), "ran")
	g.model.SetReply(callOnce(&codextest.FunctionCall{Cmd: "touch " + marker + " && echo full-access-ran"}))
	full := agent.ComposerSettings{PermissionModeID: agent.PermissionFullAccess}
	thread := g.start(t, full)
	turn := g.turn(t, thread, "run it", full)
	for _, e := range g.ev.Events() {
		if e.Kind == agent.EventApprovalRequested {
			t.Fatalf("full-access asked: %+v", e.Approval)
		}
	}
	if got := lastAssistantText(g, turn.ID); !strings.Contains(got, "full-access-ran") {
		t.Fatalf("reply = %q", got)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("command did not run: %v", err)
	}
}

func contains[T comparable](s []T, v T) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
