package codex

import (
	"encoding/json"
	"log/slog"

	"tuttid/agent"
)

// approvalPolicy answers server-to-client requests. tuttid has no one to
// ask yet, so the thread's permission mode decides: full-access accepts,
// read-only and workspace-write decline.
type approvalPolicy struct {
	log *slog.Logger
	// modeOf returns a thread's permission mode; unknown threads get the
	// default (workspace-write), hence a decline.
	modeOf func(threadID string) string
}

// decision is an answer plus a word for the log.
type decision struct {
	result any
	word   string
}

func (a approvalPolicy) answer(method string, params json.RawMessage) (any, *rpcError) {
	var route struct {
		ThreadID       string `json:"threadId"`
		ConversationID string `json:"conversationId"` // legacy requests
	}
	_ = json.Unmarshal(params, &route)
	thread := route.ThreadID
	if thread == "" {
		thread = route.ConversationID
	}
	mode := a.modeOf(thread)
	if mode == "" {
		mode = agent.PermissionWorkspaceWrite
	}
	accept := mode == agent.PermissionFullAccess

	d, ok := decide(method, params, accept)
	if !ok {
		a.log.Warn("codex: unsupported server request rejected", "thread", thread, "method", method)
		return nil, &rpcError{Code: codeMethodNotFound, Message: "method not supported by tuttid: " + method}
	}
	a.log.Info("codex: server request answered", "thread", thread, "method", method, "mode", mode, "decision", d.word)
	return d.result, nil
}

// decide is the table of request methods tuttid answers.
func decide(method string, params json.RawMessage, accept bool) (decision, bool) {
	pick := func(yes, no any, yesWord, noWord string) decision {
		if accept {
			return decision{yes, yesWord}
		}
		return decision{no, noWord}
	}
	switch method {
	case "item/commandExecution/requestApproval", "item/fileChange/requestApproval":
		return pick(map[string]any{"decision": "accept"}, map[string]any{"decision": "decline"}, "accept", "decline"), true
	case "item/permissions/requestApproval":
		return pick(
			map[string]any{"permissions": grantRequested(params), "scope": "turn"},
			map[string]any{"permissions": map[string]any{}, "scope": "turn"},
			"grant requested", "grant nothing"), true
	case "item/tool/requestUserInput":
		// Nobody to ask: empty answers let the turn go on.
		return decision{map[string]any{"answers": map[string]any{}}, "empty answers"}, true
	case "mcpServer/elicitation/request":
		return decision{map[string]any{"action": "decline", "content": nil, "_meta": nil}, "decline"}, true
	case "execCommandApproval", "applyPatchApproval": // legacy v1 requests
		return pick(
			map[string]any{"decision": "approved"},
			map[string]any{"decision": map[string]any{"denied": map[string]any{"rejection": "declined by the session's permission mode"}}},
			"approved", "denied"), true
	}
	return decision{}, false
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
