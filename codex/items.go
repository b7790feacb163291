package codex

import (
	"encoding/json"
	"strings"
	"unicode"

	"tuttid/agent"
	"tuttid/jsonrpc"
)

// itemProjection says how one ThreadItem type appears in tuttid.
type itemProjection struct {
	role string
	text func(item itemFields) string
}

// itemProjections is the one mapping from Codex item types to roles and
// text. Types not listed keep their own type as role, with no text; their
// whole JSON is still stored in Content.
var itemProjections = map[string]itemProjection{
	"userMessage":      {role: "user", text: userText},
	"agentMessage":     {role: "assistant", text: field("text")},
	"reasoning":        {role: "reasoning", text: joinedField("summary")},
	"plan":             {role: "plan", text: field("text")},
	"commandExecution": {role: "tool", text: field("command")},
	"mcpToolCall":      {role: "tool", text: toolName("server", "tool")},
	"dynamicToolCall":  {role: "tool", text: toolName("namespace", "tool")},
	"webSearch":        {role: "tool", text: field("query")},
	"fileChange":       {role: "file_change", text: changedPaths},
	// The other ThreadItem types of 0.169.0: each keeps its type as kind
	// and its whole JSON as content; the role names it.
	"hookPrompt":          {role: "hook_prompt", text: fragments},
	"functionCallOutput":  {role: "tool_output", text: toolName("namespace", "name")},
	"collabAgentToolCall": {role: "agent_tool_call", text: field("prompt")},
	"subAgentActivity":    {role: "sub_agent", text: field("agentPath")},
	"imageView":           {role: "image_view", text: field("path")},
	"sleep":               {role: "sleep", text: func(itemFields) string { return "" }},
	"imageGeneration":     {role: "image_generation", text: field("revisedPrompt")},
	"enteredReviewMode":   {role: "review_started", text: field("review")},
	"exitedReviewMode":    {role: "review_ended", text: field("review")},
	"contextCompaction":   {role: "context_compaction", text: func(itemFields) string { return "" }},
}

// itemFields are an item's top-level fields, each still JSON. They are
// jsonrpc.LineRaw, pieces of the item's bytes, not copies: a 5 MB reply's text
// field would otherwise be copied once more before it is decoded.
type itemFields map[string]jsonrpc.LineRaw

// projectItem maps one ThreadItem. started says the item came from
// item/started (so it is still running unless it says otherwise).
func projectItem(turnID string, raw json.RawMessage, started bool) agent.RuntimeMessage {
	fields := itemFieldsOf(raw) // a non-object item still keeps its raw Content
	kind := str(fields["type"])
	msg := agent.RuntimeMessage{
		ID:      str(fields["id"]),
		TurnID:  turnID,
		Role:    kind,
		Kind:    kind,
		Content: append(json.RawMessage(nil), raw...),
		Status:  agent.ItemCompleted,
	}
	if started {
		msg.Status = agent.ItemInProgress
	}
	if s := str(fields["status"]); s != "" {
		msg.Status = snake(s)
	}
	if p, ok := itemProjections[kind]; ok {
		msg.Role = p.role
		msg.Text = p.text(fields)
	}
	if msg.Role == "" {
		msg.Role = "unknown"
	}
	return msg
}

// projectTurn maps a Turn with its items.
func projectTurn(t wireTurn) agent.RuntimeTurn {
	rt := agent.RuntimeTurn{ID: t.ID, Status: turnStatus(t.Status)}
	if t.Error != nil {
		f := t.Error.failure()
		rt.Error, rt.ErrorCode = f.Message, f.Code
	}
	for _, it := range t.Items {
		rt.Messages = append(rt.Messages, projectItem(t.ID, it, false))
	}
	return rt
}

func projectTurns(ts []wireTurn) []agent.RuntimeTurn {
	out := make([]agent.RuntimeTurn, 0, len(ts))
	for _, t := range ts {
		out = append(out, projectTurn(t))
	}
	return out
}

func turnStatus(s string) agent.TurnStatus {
	switch s {
	case "completed":
		return agent.TurnCompleted
	case "interrupted":
		return agent.TurnInterrupted
	case "failed":
		return agent.TurnFailed
	default: // "inProgress", and anything newer: still running as far as we know
		return agent.TurnInProgress
	}
}

// str is a JSON string's value, "" for anything else.
func str(raw []byte) string {
	s, _ := unquote(raw)
	return s
}

// itemFieldsOf splits an item into its fields as json.Unmarshal into
// itemFields would (nil for anything but an object), through the fast
// scanner (jsonscan.go) when the item is plain.
func itemFieldsOf(raw []byte) itemFields {
	if wholeValue(raw) {
		b := raw[skipSpace(raw, 0):]
		if len(b) > 0 && b[0] == 'n' {
			return nil // null
		}
		fields := itemFields{}
		err := objectMembers(b, func(key, value []byte) error {
			k, ok := unquote(key)
			if !ok {
				return errSyntax
			}
			fields[k] = value
			return nil
		})
		if err == nil {
			return fields
		}
	}
	var fields itemFields
	_ = json.Unmarshal(raw, &fields)
	return fields
}

func field(name string) func(itemFields) string {
	return func(f itemFields) string { return str(f[name]) }
}

func joinedField(name string) func(itemFields) string {
	return func(f itemFields) string {
		var parts []string
		_ = json.Unmarshal(f[name], &parts)
		return strings.Join(parts, "\n")
	}
}

func toolName(ns, name string) func(itemFields) string {
	return func(f itemFields) string {
		if n := str(f[ns]); n != "" {
			return n + "." + str(f[name])
		}
		return str(f[name])
	}
}

func userText(f itemFields) string {
	var content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(f["content"], &content)
	var parts []string
	for _, c := range content {
		if c.Type == "text" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func changedPaths(f itemFields) string {
	var changes []struct {
		Path string `json:"path"`
	}
	_ = json.Unmarshal(f["changes"], &changes)
	var paths []string
	for _, c := range changes {
		paths = append(paths, c.Path)
	}
	return strings.Join(paths, "\n")
}

// snake turns Codex's camelCase statuses (inProgress) into tuttid's
// snake_case (in_progress).
func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

func fragments(f itemFields) string {
	var frags []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(f["fragments"], &frags)
	var parts []string
	for _, fr := range frags {
		if fr.Text != "" {
			parts = append(parts, fr.Text)
		}
	}
	return strings.Join(parts, "\n")
}
