package server_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"tuttid/codex/codextest"
)

// End-to-end tests of approvals: the real codex app-server in the default
// permission mode (workspace-write, on-request) asks, a person answers
// through GraphQL.

const approvalFields = `id agentSessionId turnId itemId kind command cwd reason details
  availableDecisions createdAt resolvedAt decision`

const approvalActivityQuery = `subscription($ws: ID!, $s: ID, $after: Int64) {
  activity(workspaceId: $ws, agentSessionId: $s, afterSeq: $after) {
    kind seq agentSessionId turn { id status }
    approval { ` + approvalFields + ` }
  }
}`

type approvalView struct {
	ID, AgentSessionID, TurnID string
	ItemID, Command, Cwd       *string
	Reason                     *string
	Kind                       string
	Details                    map[string]any
	AvailableDecisions         []string
	CreatedAt                  time.Time
	ResolvedAt                 *time.Time
	Decision                   *string
}

type approvalEvent struct {
	Kind           string
	Seq            int64
	AgentSessionID string
	Turn           *struct{ ID, Status string }
	Approval       *approvalView
}

// escalateOnce: in each turn the model asks once to run cmd outside the
// sandbox, then answers the tool's output back ("saw: ...").
func escalateOnce(cmd string) func(codextest.Request) codextest.Reply {
	return func(r codextest.Request) codextest.Reply {
		if outs := r.FunctionCallOutputs(); r.AfterToolCall() {
			return codextest.Reply{Text: "saw: " + outs[len(outs)-1].Output}
		}
		return codextest.Reply{FunctionCall: codextest.EscalatedCommand(cmd, "the test needs it")}
	}
}

func readApprovalEvents(t *testing.T, sub *wsSub, done func(approvalEvent) bool) []approvalEvent {
	t.Helper()
	var got []approvalEvent
	for {
		r, ok, timedOut := sub.next(30 * time.Second)
		if !ok || timedOut || len(r.Errors) > 0 {
			t.Fatalf("subscription: ok=%v timedOut=%v errors=%+v after %d events", ok, timedOut, r.Errors, len(got))
		}
		var out struct{ Activity approvalEvent }
		if err := json.Unmarshal(r.Data, &out); err != nil {
			t.Fatalf("decode %s: %v", r.Data, err)
		}
		got = append(got, out.Activity)
		if done(out.Activity) {
			return got
		}
	}
}

func (h *harness) approvals(ws, id string) (pending, all []approvalView) {
	h.t.Helper()
	var out struct {
		Session struct{ PendingApprovals, Approvals []approvalView }
	}
	h.must(`query($ws: ID!, $id: ID!) { session(workspaceId: $ws, id: $id) {
	  pendingApprovals { `+approvalFields+` } approvals { `+approvalFields+` } } }`,
		map[string]any{"ws": ws, "id": id}, &out)
	return out.Session.PendingApprovals, out.Session.Approvals
}

func (h *harness) respond(ws, id, approvalID, decision string) (approvalView, []gqlError) {
	h.t.Helper()
	var out struct{ RespondToApproval approvalView }
	errs := h.do(`mutation($in: RespondToApprovalInput!) { respondToApproval(input: $in) { `+approvalFields+` } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": id, "approvalId": approvalID, "decision": decision}}, &out)
	return out.RespondToApproval, errs
}

func (h *harness) sendAsync(ws, id, text string) string {
	h.t.Helper()
	var out struct{ SendMessage struct{ ID string } }
	h.must(`mutation($in: SendMessageInput!) { sendMessage(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": id, "text": text}}, &out)
	return out.SendMessage.ID
}

func errCode(errs []gqlError) string {
	if len(errs) == 0 {
		return ""
	}
	return errs[0].Code()
}

func TestApprovalAnsweredByPersonE2E(t *testing.T) {
	h := startServer(t, harnessOpts{})
	h.model.SetReply(escalateOnce("echo e2e-approved-77"))
	ws := h.createWorkspace("w")
	sub := h.ws(protoTransportWS).subscribe(approvalActivityQuery, activityVars(ws, "", h.publishMarker(ws)))
	s := h.startSession(ws, "asks")
	turnID := h.sendAsync(ws, s.ID, "run it")

	evs := readApprovalEvents(t, sub, func(e approvalEvent) bool { return e.Kind == "APPROVAL_REQUESTED" })
	req := evs[len(evs)-1].Approval
	if req == nil || req.AgentSessionID != s.ID || req.TurnID != turnID || req.Kind != "COMMAND" ||
		req.Command == nil || !strings.Contains(*req.Command, "echo e2e-approved-77") ||
		req.Reason == nil || *req.Reason != "the test needs it" || req.ResolvedAt != nil || req.Decision != nil ||
		req.Details["threadId"] != s.ProviderSessionID {
		t.Fatalf("APPROVAL_REQUESTED approval = %+v", req)
	}
	for _, d := range []string{"ACCEPT", "DECLINE", "CANCEL"} {
		if !slices.Contains(req.AvailableDecisions, d) {
			t.Fatalf("availableDecisions %v lack %s", req.AvailableDecisions, d)
		}
	}
	// The session waits on the person: WORKING, with the request pending.
	if st := h.session(ws, s.ID).Status; st != "WORKING" {
		t.Fatalf("status while waiting = %s", st)
	}
	pending, _ := h.approvals(ws, s.ID)
	if len(pending) != 1 || pending[0].ID != req.ID {
		t.Fatalf("pendingApprovals = %+v", pending)
	}

	// Errors: unknown id, a decision not offered.
	if _, errs := h.respond(ws, s.ID, "01900000-0000-7000-8000-000000000000", "ACCEPT"); errCode(errs) != "agent.approval_not_found" {
		t.Fatalf("unknown approval: %+v", errs)
	}
	if !slices.Contains(req.AvailableDecisions, "ACCEPT_FOR_SESSION") {
		if _, errs := h.respond(ws, s.ID, req.ID, "ACCEPT_FOR_SESSION"); errCode(errs) != "invalid_input" {
			t.Fatalf("decision not offered: %+v", errs)
		}
	}

	got, errs := h.respond(ws, s.ID, req.ID, "ACCEPT")
	if len(errs) > 0 || got.Decision == nil || *got.Decision != "ACCEPT" || got.ResolvedAt == nil {
		t.Fatalf("respondToApproval = %+v, %+v", got, errs)
	}
	evs = readApprovalEvents(t, sub, func(e approvalEvent) bool { return e.Kind == "APPROVAL_RESOLVED" })
	if res := evs[len(evs)-1].Approval; res.ID != req.ID || res.Decision == nil || *res.Decision != "ACCEPT" {
		t.Fatalf("APPROVAL_RESOLVED approval = %+v", res)
	}
	view := h.waitTurn(ws, s.ID, turnID, "COMPLETED")
	last := view.Turns[len(view.Turns)-1].Messages
	if reply := last[len(last)-1]; reply.Role != "assistant" || !strings.Contains(reply.Text, "e2e-approved-77") {
		t.Fatalf("reply = %+v, want the command's output", reply)
	}
	pending, all := h.approvals(ws, s.ID)
	if len(pending) != 0 || len(all) != 1 || all[0].Decision == nil || *all[0].Decision != "ACCEPT" {
		t.Fatalf("after: pending=%+v all=%+v", pending, all)
	}
	if _, errs := h.respond(ws, s.ID, req.ID, "DECLINE"); errCode(errs) != "agent.approval_already_resolved" {
		t.Fatalf("second answer: %+v", errs)
	}
}

func TestApprovalDeclinedAndCancelledByInterruptE2E(t *testing.T) {
	h := startServer(t, harnessOpts{})
	marker := filepath.Join(t.TempDir(), "ran")
	h.model.SetReply(escalateOnce("touch " + marker))
	ws := h.createWorkspace("w")
	s := h.startSession(ws, "declines")

	// DECLINE: the command does not run, the turn completes.
	turnID := h.sendAsync(ws, s.ID, "run it")
	var req approvalView
	h.eventually("a pending approval", 30*time.Second, func() bool {
		p, _ := h.approvals(ws, s.ID)
		if len(p) > 0 {
			req = p[0]
		}
		return len(p) > 0
	})
	if _, errs := h.respond(ws, s.ID, req.ID, "DECLINE"); len(errs) > 0 {
		t.Fatal(errs)
	}
	h.waitTurn(ws, s.ID, turnID, "COMPLETED")
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("declined command ran: %v", err)
	}

	// Interrupt while pending: the request resolves as CANCEL.
	turnID = h.sendAsync(ws, s.ID, "again")
	h.eventually("a second pending approval", 30*time.Second, func() bool {
		p, _ := h.approvals(ws, s.ID)
		if len(p) > 0 {
			req = p[0]
		}
		return len(p) > 0
	})
	h.must(`mutation($in: InterruptTurnInput!) { interruptTurn(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": s.ID, "turnId": turnID}}, nil)
	h.waitTurn(ws, s.ID, turnID, "INTERRUPTED")
	pending, all := h.approvals(ws, s.ID)
	if len(pending) != 0 || len(all) != 2 || all[1].ID != req.ID || all[1].Decision == nil || *all[1].Decision != "CANCEL" {
		t.Fatalf("after interrupt: pending=%+v all=%s", pending, fmt.Sprint(all))
	}
	if _, errs := h.respond(ws, s.ID, req.ID, "ACCEPT"); errCode(errs) != "agent.approval_already_resolved" {
		t.Fatalf("answer after interrupt: %+v", errs)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("cancelled command ran: %v", err)
	}
}
