package codex

import (
	"encoding/json"
	"testing"

	"tuttid/agent"
)

func TestProjectItem(t *testing.T) {
	for _, c := range []struct {
		item    string
		started bool
		role    string
		text    string
		status  string
	}{
		{`{"type":"userMessage","id":"i","content":[{"type":"text","text":"a","text_elements":[]},{"type":"image","url":"u"},{"type":"text","text":"b"}]}`, false, "user", "a\nb", "completed"},
		{`{"type":"agentMessage","id":"i","text":"hello","phase":null}`, false, "assistant", "hello", "completed"},
		{`{"type":"agentMessage","id":"i","text":""}`, true, "assistant", "", "in_progress"},
		{`{"type":"reasoning","id":"i","summary":["s1","s2"],"content":["raw"]}`, false, "reasoning", "s1\ns2", "completed"},
		{`{"type":"commandExecution","id":"i","command":"ls -la","status":"inProgress"}`, true, "tool", "ls -la", "in_progress"},
		{`{"type":"commandExecution","id":"i","command":"rm x","status":"declined"}`, false, "tool", "rm x", "declined"},
		{`{"type":"mcpToolCall","id":"i","server":"gh","tool":"search","status":"failed"}`, false, "tool", "gh.search", "failed"},
		{`{"type":"dynamicToolCall","id":"i","namespace":null,"tool":"t","status":"completed"}`, false, "tool", "t", "completed"},
		{`{"type":"webSearch","id":"i","query":"go generics","action":null}`, false, "tool", "go generics", "completed"},
		{`{"type":"fileChange","id":"i","changes":[{"path":"a.go","kind":{"type":"add"},"diff":""},{"path":"b.go"}],"status":"completed"}`, false, "file_change", "a.go\nb.go", "completed"},
		{`{"type":"plan","id":"i","text":"1. do"}`, false, "plan", "1. do", "completed"},
		{`{"type":"contextCompaction","id":"i"}`, false, "context_compaction", "", "completed"},
		{`{"type":"imageView","id":"i","path":"/x.png"}`, true, "image_view", "/x.png", "in_progress"},
		{`{"type":"hookPrompt","id":"i","fragments":[{"text":"h1","hookRunId":"r"},{"text":"h2","hookRunId":"r"}]}`, false, "hook_prompt", "h1\nh2", "completed"},
		{`{"type":"functionCallOutput","id":"i","namespace":null,"name":"f","output":"x"}`, false, "tool_output", "f", "completed"},
		{`{"type":"enteredReviewMode","id":"i","review":"diff"}`, false, "review_started", "diff", "completed"},
		{`{"type":"somethingNew","id":"i","status":"weirdState"}`, false, "somethingNew", "", "weird_state"},
		{`{"id":"i"}`, false, "unknown", "", "completed"},
	} {
		m := projectItem("turn", json.RawMessage(c.item), c.started)
		var kind struct{ Type string }
		_ = json.Unmarshal([]byte(c.item), &kind)
		if m.Role != c.role || m.Text != c.text || m.Status != c.status || m.Kind != kind.Type || m.ID != "i" || m.TurnID != "turn" || string(m.Content) != c.item {
			t.Errorf("%s started=%v:\n got %+v\nwant role=%s text=%q status=%s", c.item, c.started, m, c.role, c.text, c.status)
		}
	}
}

func TestProjectTurn(t *testing.T) {
	var turn wireTurn
	_ = json.Unmarshal([]byte(`{"id":"t","status":"failed","error":{"message":"boom","codexErrorInfo":null},
		"items":[{"type":"userMessage","id":"u","content":[{"type":"text","text":"q"}]}]}`), &turn)
	rt := projectTurn(turn)
	if rt.ID != "t" || rt.Status != agent.TurnFailed || rt.Error != "boom" || len(rt.Messages) != 1 || rt.Messages[0].Text != "q" {
		t.Fatalf("turn = %+v", rt)
	}
	for in, want := range map[string]agent.TurnStatus{
		"completed": agent.TurnCompleted, "interrupted": agent.TurnInterrupted,
		"failed": agent.TurnFailed, "inProgress": agent.TurnInProgress, "": agent.TurnInProgress,
	} {
		if got := turnStatus(in); got != want {
			t.Errorf("turnStatus(%q) = %s", in, got)
		}
	}
}
