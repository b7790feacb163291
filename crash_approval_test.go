package main

import (
	"testing"
	"time"

	"tuttid/codex/codextest"
)

type approvalRow struct {
	ID         string
	Decision   *string
	ResolvedAt *time.Time
}

func (p *proc) approvals(ws, id string) (pending, all []approvalRow) {
	p.t.Helper()
	var out struct {
		Session struct{ PendingApprovals, Approvals []approvalRow }
	}
	p.must(`query($ws: ID!, $id: ID!) { session(workspaceId: $ws, id: $id) {
	  pendingApprovals { id decision resolvedAt } approvals { id decision resolvedAt } } }`,
		map[string]any{"ws": ws, "id": id}, &out)
	return out.Session.PendingApprovals, out.Session.Approvals
}

// TestCrashAfterApprovalAnswer kills tuttid (kill -9 from outside) as soon
// as respondToApproval has answered: after a restart the person's answer
// is kept (ACCEPT, not cancelled by the start's settling), nothing is left
// pending or running, and the session takes the next message.
func TestCrashAfterApprovalAnswer(t *testing.T) {
	r := newCrashRig(t)
	r.model.SetReply(func(req codextest.Request) codextest.Reply {
		if req.LastUserText() != "run it" {
			return codextest.DefaultReply(req)
		}
		if outs := req.FunctionCallOutputs(); req.AfterToolCall() {
			return codextest.Reply{Text: "saw: " + outs[len(outs)-1].Output, Delay: 5 * time.Second}
		}
		return codextest.Reply{FunctionCall: codextest.EscalatedCommand("echo crash-approved-5", "the test needs it")}
	})
	p := r.tuttid()
	ws, parent := r.parent(p)
	p.send(ws, parent.ID, "run it")
	var asked []approvalRow
	deadline := time.Now().Add(60 * time.Second)
	for len(asked) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no approval asked")
		}
		time.Sleep(50 * time.Millisecond)
		asked, _ = p.approvals(ws, parent.ID)
	}
	var answered struct{ RespondToApproval approvalRow }
	p.must(`mutation($in: RespondToApprovalInput!) { respondToApproval(input: $in) { id decision resolvedAt } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": parent.ID, "approvalId": asked[0].ID, "decision": "ACCEPT"}}, &answered)
	p.kill()
	if d := answered.RespondToApproval.Decision; d == nil || *d != "ACCEPT" {
		t.Fatalf("respondToApproval answered %+v", answered.RespondToApproval)
	}

	q := r.tuttid()
	r.journalAndMessages()
	pending, all := q.approvals(ws, parent.ID)
	if len(pending) != 0 || len(all) != 1 || all[0].Decision == nil || *all[0].Decision != "ACCEPT" || all[0].ResolvedAt == nil {
		t.Errorf("after the restart: pending %+v, approvals %+v; want the one ACCEPT kept", pending, all)
	}
	s := q.session(ws, parent.ID)
	t.Logf("after the restart: %s, turns %+v", s.Status, s.Turns)
	if !idle(s) || len(s.Turns) != 2 {
		t.Errorf("session after the restart: %+v, want READY with two settled turns", s)
	}
	q.send(ws, parent.ID, "next")
	q.waitSession(ws, parent.ID, "next turn done", func(s sessionView) bool {
		last := s.Turns[len(s.Turns)-1]
		return idle(s) && len(s.Turns) == 3 && last.Status == "COMPLETED"
	})
}
