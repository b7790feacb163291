package codex

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"tuttid/agent"
	"tuttid/jsonrpc"
)

// approvals answers Codex's server-to-client requests. In workspace-write
// (on-request) a person answers through RespondToApproval: the request is
// reported as an EventApprovalRequested and waits, without a timeout, until
// it is answered or its turn ends another way (then it resolves as CANCEL).
// read-only and full-access answer by policy, as does a thread tuttid did
// not start or resume (no one would see the question).
type approvals struct {
	log *slog.Logger
	// modeOf returns a thread's permission mode ("" when unknown).
	modeOf func(threadID string) string
	// push reports an event in order with the notifications.
	push func(agent.Event)
	// interrupt ends a turn; CANCEL uses it for requests whose answer has
	// no cancel of its own.
	interrupt func(ctx context.Context, threadID, turnID string) error
	now       func() time.Time

	mu      sync.Mutex
	pending map[string]*pendingApproval // by agent.ApprovalRequest.ID
}

type pendingApproval struct {
	req      agent.ApprovalRequest
	gen      uint64 // the app-server launch that asked
	serverID string // Codex's request id (raw JSON)
	shape    requestShape
	answer   chan agent.ApprovalResponse // buffered 1; sent once
}

func newApprovals(log *slog.Logger, modeOf func(string) string, push func(agent.Event)) *approvals {
	return &approvals{log: log, modeOf: modeOf, push: push, now: time.Now, pending: map[string]*pendingApproval{}}
}

// receive runs on the reader goroutine, in order with the notifications,
// so the request event comes before anything Codex reports after asking.
// The returned func runs on its own goroutine and may wait for a person
// until ctx ends (the app-server's stream closed).
func (a *approvals) receive(gen uint64, id json.RawMessage, method string, params json.RawMessage) jsonrpc.Answer {
	shape, known := requestShapes[method]
	if !known {
		return func(context.Context) (any, *jsonrpc.Error) { return a.unsupported(method, params) }
	}
	req := shape.describe(params)
	req.Method = method
	req.Details = append(json.RawMessage(nil), params...)
	mode := a.modeOf(req.ThreadID)
	if mode != agent.PermissionWorkspaceWrite {
		return func(context.Context) (any, *jsonrpc.Error) { return a.byPolicy(mode, req, shape), nil }
	}

	req.ID = uuid.Must(uuid.NewV7()).String()
	req.CreatedAt = a.now()
	p := &pendingApproval{req: req, gen: gen, serverID: string(id), shape: shape, answer: make(chan agent.ApprovalResponse, 1)}
	a.mu.Lock()
	a.pending[req.ID] = p
	a.mu.Unlock()
	a.log.Info("codex: approval asked of the session's person", "thread", req.ThreadID, "turn", req.TurnID,
		"method", method, "approval", req.ID, "kind", req.Kind)
	ev := req
	a.push(agent.Event{Kind: agent.EventApprovalRequested, Provider: agent.ProviderCodex,
		ThreadID: req.ThreadID, TurnID: req.TurnID, Method: method, Approval: &ev})

	return func(ctx context.Context) (any, *jsonrpc.Error) {
		select {
		case resp := <-p.answer:
			return shape.encode(resp.Decision, p.req.Details, resp.Answers), nil
		case <-ctx.Done():
			// The app-server is gone; nobody reads an answer now.
			a.settle(p.req.ID, "runtime_exit")
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "app-server stream closed"}
		}
	}
}

// respond sends a person's decision to a pending request.
func (a *approvals) respond(ctx context.Context, in agent.ApprovalResponse) error {
	a.mu.Lock()
	p, ok := a.pending[in.ID]
	if ok && !slices.Contains(p.req.AvailableDecisions, in.Decision) {
		a.mu.Unlock()
		return fmt.Errorf("%w: %s is not offered (offered: %v)", agent.ErrApprovalDecisionNotOffered, in.Decision, p.req.AvailableDecisions)
	}
	delete(a.pending, in.ID)
	a.mu.Unlock()
	if !ok {
		return fmt.Errorf("%w: %s", agent.ErrApprovalNotPending, in.ID)
	}
	a.log.Info("codex: approval answered", "thread", p.req.ThreadID, "turn", p.req.TurnID,
		"approval", in.ID, "decision", in.Decision)
	// The event goes first: the turn can go on (and end) as soon as Codex
	// reads the answer, and ingestion must see the decision before that.
	a.push(agent.Event{Kind: agent.EventApprovalResolved, Provider: agent.ProviderCodex,
		ThreadID: p.req.ThreadID, TurnID: p.req.TurnID,
		Resolution: &agent.ApprovalResolution{ID: in.ID, Decision: in.Decision, By: "user"}})
	p.answer <- in
	if in.Decision == agent.DecisionCancel && !p.shape.nativeCancel && a.interrupt != nil && p.req.TurnID != "" {
		if err := a.interrupt(ctx, p.req.ThreadID, p.req.TurnID); err != nil {
			a.log.Warn("codex: interrupt after a cancelled request failed", "thread", p.req.ThreadID, "turn", p.req.TurnID, "err", err)
		}
	}
	return nil
}

// settle resolves one pending request as CANCEL without a person (its
// turn ended, the app-server exited, Codex resolved it itself).
func (a *approvals) settle(id, by string) {
	a.mu.Lock()
	p, ok := a.pending[id]
	delete(a.pending, id)
	a.mu.Unlock()
	if !ok {
		return
	}
	a.log.Info("codex: approval resolved as CANCEL", "thread", p.req.ThreadID, "turn", p.req.TurnID, "approval", id, "by", by)
	a.push(agent.Event{Kind: agent.EventApprovalResolved, Provider: agent.ProviderCodex,
		ThreadID: p.req.ThreadID, TurnID: p.req.TurnID,
		Resolution: &agent.ApprovalResolution{ID: id, Decision: agent.DecisionCancel, By: by}})
	p.answer <- agent.ApprovalResponse{ID: id, Decision: agent.DecisionCancel}
}

// settleWhere settles every pending request that match selects.
func (a *approvals) settleWhere(by string, match func(*pendingApproval) bool) {
	a.mu.Lock()
	var ids []string
	for id, p := range a.pending {
		if match(p) {
			ids = append(ids, id)
		}
	}
	a.mu.Unlock()
	slices.Sort(ids) // UUIDv7: oldest first
	for _, id := range ids {
		a.settle(id, by)
	}
}

// turnEnded settles the requests of a finished turn (an interrupt ends a
// turn without Codex resolving its pending request).
func (a *approvals) turnEnded(threadID, turnID string) {
	a.settleWhere("turn_ended", func(p *pendingApproval) bool {
		return p.req.ThreadID == threadID && (p.req.TurnID == turnID || p.req.TurnID == "")
	})
}

// resolvedByServer handles serverRequest/resolved for a request tuttid
// still holds: Codex no longer waits for it.
func (a *approvals) resolvedByServer(gen uint64, params json.RawMessage) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil || len(p.RequestID) == 0 {
		return
	}
	id := string(p.RequestID)
	a.settleWhere("provider", func(q *pendingApproval) bool { return q.gen == gen && q.serverID == id })
}

// processEnded settles every request of an app-server launch that died.
func (a *approvals) processEnded(gen uint64) {
	a.settleWhere("runtime_exit", func(p *pendingApproval) bool { return p.gen == gen })
}

// byPolicy answers without a person: full-access accepts, anything else
// declines. It says so in the log.
func (a *approvals) byPolicy(mode string, req agent.ApprovalRequest, shape requestShape) any {
	d := agent.DecisionDecline
	if mode == agent.PermissionFullAccess {
		d = agent.DecisionAccept
	}
	if mode == "" {
		mode = "unknown thread"
	}
	a.log.Info("codex: server request answered by policy", "thread", req.ThreadID, "turn", req.TurnID,
		"method", req.Method, "mode", mode, "decision", d)
	return shape.encode(d, req.Details, nil)
}

// unsupported answers the requests that are not questions for a person:
// dynamic tool calls (tuttid registers none), auth refresh, attestation.
func (a *approvals) unsupported(method string, params json.RawMessage) (any, *jsonrpc.Error) {
	if method == "item/tool/call" {
		a.log.Warn("codex: dynamic tool call failed (tuttid registers no dynamic tools)", "params", preview(params))
		return map[string]any{"success": false, "contentItems": []any{
			map[string]any{"type": "inputText", "text": "tuttid provides no dynamic tools"},
		}}, nil
	}
	a.log.Warn("codex: unsupported server request rejected", "method", method)
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not supported by tuttid: " + method}
}

// preview is the start of a request's params, enough for a log line.
func preview(b []byte) string {
	const n = 200
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// requestShape is how one request method reads and is answered.
type requestShape struct {
	describe func(params json.RawMessage) agent.ApprovalRequest
	// encode builds Codex's answer for a decision; details are the
	// request's params, answers the person's content (user input, forms).
	encode func(d agent.ApprovalDecision, details, answers json.RawMessage) any
	// nativeCancel: the answer itself can cancel the turn; otherwise
	// CANCEL declines and interrupts the turn.
	nativeCancel bool
}

// requestShapes lists every server request of 0.169.0 that asks a person
// (ServerRequest in `codex app-server generate-json-schema`).
var requestShapes = map[string]requestShape{
	"item/commandExecution/requestApproval": {describe: describeCommand, encode: encodeCommand, nativeCancel: true},
	"item/fileChange/requestApproval": {
		describe: describeV2(agent.ApprovalFileChange, agent.DecisionAccept, agent.DecisionAcceptForSession),
		encode: decisionWords(map[agent.ApprovalDecision]any{
			agent.DecisionAccept: "accept", agent.DecisionAcceptForSession: "acceptForSession",
			agent.DecisionDecline: "decline", agent.DecisionCancel: "cancel",
		}),
		nativeCancel: true,
	},
	"item/permissions/requestApproval": {
		describe: describeV2(agent.ApprovalPermissions, agent.DecisionAccept, agent.DecisionAcceptForSession),
		encode:   encodePermissions,
	},
	"item/tool/requestUserInput": {
		describe: describeUserInput,
		encode: func(d agent.ApprovalDecision, _, answers json.RawMessage) any {
			if d == agent.DecisionAccept && isJSONObject(answers) {
				return map[string]any{"answers": answers}
			}
			return map[string]any{"answers": map[string]any{}}
		},
	},
	"mcpServer/elicitation/request": {
		describe: describeElicitation,
		encode: func(d agent.ApprovalDecision, _, answers json.RawMessage) any {
			action := map[agent.ApprovalDecision]string{agent.DecisionAccept: "accept", agent.DecisionCancel: "cancel"}[d]
			if action == "" {
				action = "decline"
			}
			var content any
			if action == "accept" && isJSONObject(answers) {
				content = answers
			}
			return map[string]any{"action": action, "content": content, "_meta": nil}
		},
		nativeCancel: true,
	},
	// Legacy v1 requests (conversationId, ReviewDecision).
	"execCommandApproval": {
		describe:     describeLegacy(agent.ApprovalCommand),
		encode:       encodeLegacy,
		nativeCancel: true,
	},
	"applyPatchApproval": {
		describe:     describeLegacy(agent.ApprovalFileChange),
		encode:       encodeLegacy,
		nativeCancel: true,
	},
}

// wireRequestCommon holds the fields most v2 requests share.
type wireRequestCommon struct {
	ThreadID string  `json:"threadId"`
	TurnID   *string `json:"turnId"`
	ItemID   string  `json:"itemId"`
	Cwd      *string `json:"cwd"`
	Reason   *string `json:"reason"`
}

func (w wireRequestCommon) request(kind agent.ApprovalKind) agent.ApprovalRequest {
	return agent.ApprovalRequest{
		ThreadID: w.ThreadID, TurnID: strOr(w.TurnID, ""), ItemID: w.ItemID,
		Kind: kind, Cwd: strOr(w.Cwd, ""), Reason: strOr(w.Reason, ""),
	}
}

// offer is DECLINE and CANCEL, always offered, plus what the request
// lists, in the enum's order.
func offer(listed ...agent.ApprovalDecision) []agent.ApprovalDecision {
	var out []agent.ApprovalDecision
	for _, d := range agent.ApprovalDecisions() {
		if d == agent.DecisionDecline || d == agent.DecisionCancel || slices.Contains(listed, d) {
			out = append(out, d)
		}
	}
	return out
}

func describeV2(kind agent.ApprovalKind, listed ...agent.ApprovalDecision) func(json.RawMessage) agent.ApprovalRequest {
	return func(params json.RawMessage) agent.ApprovalRequest {
		var w wireRequestCommon
		_ = json.Unmarshal(params, &w)
		r := w.request(kind)
		r.AvailableDecisions = offer(listed...)
		return r
	}
}

// describeCommand reads item/commandExecution/requestApproval. Codex lists
// its decisions ("accept", {"acceptWithExecpolicyAmendment":...},
// "cancel", ...); it honours "decline" though it does not list it.
func describeCommand(params json.RawMessage) agent.ApprovalRequest {
	var w struct {
		wireRequestCommon
		Command            *string           `json:"command"`
		AvailableDecisions []json.RawMessage `json:"availableDecisions"`
	}
	_ = json.Unmarshal(params, &w)
	r := w.request(agent.ApprovalCommand)
	r.Command = strOr(w.Command, "")
	var listed []agent.ApprovalDecision
	for _, raw := range w.AvailableDecisions {
		if d, ok := commandDecision(raw); ok {
			listed = append(listed, d)
		}
	}
	if w.AvailableDecisions == nil {
		listed = []agent.ApprovalDecision{agent.DecisionAccept, agent.DecisionAcceptForSession}
	}
	r.AvailableDecisions = offer(listed...)
	return r
}

// commandDecision maps one of Codex's CommandExecutionApprovalDecision
// values; network policy amendments have no tuttid decision.
func commandDecision(raw json.RawMessage) (agent.ApprovalDecision, bool) {
	switch str(raw) {
	case "accept":
		return agent.DecisionAccept, true
	case "acceptForSession":
		return agent.DecisionAcceptForSession, true
	case "decline":
		return agent.DecisionDecline, true
	case "cancel":
		return agent.DecisionCancel, true
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) == nil {
		if _, ok := obj["acceptWithExecpolicyAmendment"]; ok {
			return agent.DecisionAcceptAlways, true
		}
	}
	return "", false
}

func encodeCommand(d agent.ApprovalDecision, details, _ json.RawMessage) any {
	if d == agent.DecisionAcceptAlways {
		// Codex's own amendment object, as it listed it.
		var w struct {
			AvailableDecisions []json.RawMessage `json:"availableDecisions"`
		}
		_ = json.Unmarshal(details, &w)
		for _, raw := range w.AvailableDecisions {
			if got, _ := commandDecision(raw); got == agent.DecisionAcceptAlways {
				return map[string]any{"decision": raw}
			}
		}
		d = agent.DecisionAccept
	}
	words := map[agent.ApprovalDecision]string{
		agent.DecisionAccept: "accept", agent.DecisionAcceptForSession: "acceptForSession",
		agent.DecisionDecline: "decline", agent.DecisionCancel: "cancel",
	}
	return map[string]any{"decision": words[d]}
}

func decisionWords(words map[agent.ApprovalDecision]any) func(agent.ApprovalDecision, json.RawMessage, json.RawMessage) any {
	return func(d agent.ApprovalDecision, _, _ json.RawMessage) any {
		w, ok := words[d]
		if !ok {
			w = words[agent.DecisionDecline]
		}
		return map[string]any{"decision": w}
	}
}

// encodePermissions grants the requested profile for the turn (ACCEPT) or
// the session (ACCEPT_FOR_SESSION); anything else grants nothing.
func encodePermissions(d agent.ApprovalDecision, details, _ json.RawMessage) any {
	switch d {
	case agent.DecisionAccept:
		return map[string]any{"permissions": grantRequested(details), "scope": "turn"}
	case agent.DecisionAcceptForSession:
		return map[string]any{"permissions": grantRequested(details), "scope": "session"}
	}
	return map[string]any{"permissions": map[string]any{}, "scope": "turn"}
}

func describeUserInput(params json.RawMessage) agent.ApprovalRequest {
	var w struct {
		wireRequestCommon
		Questions []struct {
			Question string `json:"question"`
		} `json:"questions"`
	}
	_ = json.Unmarshal(params, &w)
	r := w.request(agent.ApprovalUserInput)
	var qs []string
	for _, q := range w.Questions {
		qs = append(qs, q.Question)
	}
	r.Reason = strings.Join(qs, "\n")
	r.AvailableDecisions = offer(agent.DecisionAccept)
	return r
}

func describeElicitation(params json.RawMessage) agent.ApprovalRequest {
	var w struct {
		wireRequestCommon
		ServerName string `json:"serverName"`
		Message    string `json:"message"`
	}
	_ = json.Unmarshal(params, &w)
	r := w.request(agent.ApprovalMCPElicitation)
	r.Reason = w.Message
	r.Command = w.ServerName
	r.AvailableDecisions = offer(agent.DecisionAccept)
	return r
}

func describeLegacy(kind agent.ApprovalKind) func(json.RawMessage) agent.ApprovalRequest {
	return func(params json.RawMessage) agent.ApprovalRequest {
		var w struct {
			ConversationID string   `json:"conversationId"`
			CallID         string   `json:"callId"`
			Command        []string `json:"command"`
			Cwd            string   `json:"cwd"`
			Reason         *string  `json:"reason"`
		}
		_ = json.Unmarshal(params, &w)
		return agent.ApprovalRequest{
			ThreadID: w.ConversationID, ItemID: w.CallID, Kind: kind,
			Command: strings.Join(w.Command, " "), Cwd: w.Cwd, Reason: strOr(w.Reason, ""),
			AvailableDecisions: offer(agent.DecisionAccept, agent.DecisionAcceptForSession),
		}
	}
}

func encodeLegacy(d agent.ApprovalDecision, _, _ json.RawMessage) any {
	switch d {
	case agent.DecisionAccept, agent.DecisionAcceptAlways:
		return map[string]any{"decision": "approved"}
	case agent.DecisionAcceptForSession:
		return map[string]any{"decision": "approved_for_session"}
	case agent.DecisionCancel:
		return map[string]any{"decision": "abort"}
	}
	return map[string]any{"decision": map[string]any{"denied": map[string]any{"rejection": "declined"}}}
}

// grantRequested echoes the requested permission profile as the granted
// one, leaving out the parts requested as null.
func grantRequested(params json.RawMessage) map[string]any {
	var p struct {
		Permissions map[string]json.RawMessage `json:"permissions"`
	}
	_ = json.Unmarshal(params, &p)
	granted := map[string]any{}
	for k, v := range p.Permissions {
		if len(v) > 0 && string(v) != "null" {
			granted[k] = v
		}
	}
	return granted
}

func isJSONObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return len(raw) > 0 && json.Unmarshal(raw, &m) == nil && m != nil
}
