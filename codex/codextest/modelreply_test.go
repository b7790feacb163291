package codextest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestModelReplyByName(t *testing.T) {
	ms := StartModelServer(t)
	ms.SetReply(func(r Request) Reply { return Reply{Text: "general " + r.LastUserText()} })
	ms.SetModelReply("model-a", func(r Request) Reply { return Reply{Text: "a says " + r.LastUserText()} })
	ms.SetModelReply("model-b", func(r Request) Reply { return Reply{Status: http.StatusTeapot, ErrorMessage: "b refuses"} })
	post := func(model, text string) (int, string) {
		t.Helper()
		body := fmt.Sprintf(`{"model":%q,"stream":true,"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":%q}]}]}`, model, text)
		resp, err := http.Post(ms.URL()+"/responses", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	tests := []struct {
		model, text string
		status      int
		want        string
	}{
		{"model-a", "hi", 200, `"text":"a says hi"`},
		{"model-b", "hi", http.StatusTeapot, `"message":"b refuses"`},
		{"model-c", "hi", 200, `"text":"general hi"`},
		{"", "hi", 200, `"text":"general hi"`},
	}
	for _, tc := range tests {
		status, body := post(tc.model, tc.text)
		if status != tc.status || !strings.Contains(body, tc.want) {
			t.Errorf("model %q: %d %s, want %d with %s", tc.model, status, body, tc.status, tc.want)
		}
	}

	// nil removes a script: model-a falls back to the general reply.
	ms.SetModelReply("model-a", nil)
	if status, body := post("model-a", "again"); status != 200 || !strings.Contains(body, `"text":"general again"`) {
		t.Errorf("after removal: %d %s", status, body)
	}
	// SetReply(nil) restores DefaultReply for the models without a script
	// and leaves the scripts alone.
	ms.SetReply(nil)
	if _, body := post("model-c", "x"); !strings.Contains(body, `"text":"reply: x"`) {
		t.Errorf("default reply: %s", body)
	}
	if status, _ := post("model-b", "x"); status != http.StatusTeapot {
		t.Errorf("model-b after SetReply(nil): %d", status)
	}

	if got := len(ms.ModelRequests("model-a")); got != 2 {
		t.Errorf("ModelRequests(model-a) = %d, want 2", got)
	}
	if r := ms.ModelRequests("model-b"); len(r) != 2 || r[0].Model() != "model-b" || r[0].LastUserText() != "hi" {
		t.Errorf("ModelRequests(model-b) = %+v", r)
	}
}

func TestCommandThen(t *testing.T) {
	f := CommandThen("echo ok > f", "done")
	first := f(ParseRequest([]byte(`{"input":[{"type":"message","role":"user","content":"go"}]}`)))
	if first.FunctionCall == nil || first.FunctionCall.Cmd != "echo ok > f" || first.Text != "" {
		t.Fatalf("fresh turn: %+v", first)
	}
	after := f(ParseRequest([]byte(`{"input":[{"type":"message","role":"user","content":"go"},{"type":"function_call","call_id":"c"},{"type":"function_call_output","call_id":"c","output":"x"}]}`)))
	if after.FunctionCall != nil || after.Text != "done" {
		t.Fatalf("after the tool call: %+v", after)
	}
}

// Two threads of one real Codex, told apart only by their model: each
// branch's command writes its own check script, one that passes and one
// that fails, the way Explore's tests need.
func TestModelReplyRealCodex(t *testing.T) {
	ms := StartModelServer(t)
	ms.SetModelReply("model-pass", CommandThen("printf 'exit 0\\n' > check.sh", "wrote a passing check"))
	ms.SetModelReply("model-fail", CommandThen("printf 'exit 3\\n' > check.sh", "wrote a failing check"))
	a := startAppServer(t, ms)

	dirs := map[string]string{}
	threads := map[string]string{}
	for _, model := range []string{"model-pass", "model-fail"} {
		dirs[model] = t.TempDir()
		threads[model] = a.startThread(map[string]any{
			"cwd": dirs[model], "model": model, "approvalPolicy": "never", "sandbox": "workspace-write",
		})
	}
	for _, model := range []string{"model-pass", "model-fail"} {
		r := a.runTurn(threads[model], "make the check")
		want := map[string]string{"model-pass": "wrote a passing check", "model-fail": "wrote a failing check"}[model]
		if r.turn.Status != "completed" || len(r.agentTexts) != 1 || r.agentTexts[0] != want {
			t.Fatalf("%s: status %q texts %q warnings %v", model, r.turn.Status, r.agentTexts, r.warnings)
		}
	}
	for model, wantCode := range map[string]int{"model-pass": 0, "model-fail": 3} {
		if _, err := os.Stat(filepath.Join(dirs[model], "check.sh")); err != nil {
			t.Fatalf("%s: %v", model, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		cmd := exec.CommandContext(ctx, "sh", "check.sh")
		cmd.Dir = dirs[model]
		err := cmd.Run()
		cancel()
		if got := cmd.ProcessState.ExitCode(); got != wantCode {
			t.Errorf("%s: check exits %d (%v), want %d", model, got, err, wantCode)
		}
		// Each thread's requests all named its model: two a turn (the call,
		// then the answer to its output).
		reqs := ms.ModelRequests(model)
		if len(reqs) != 2 || reqs[0].ThreadID() != threads[model] || !reqs[1].AfterToolCall() {
			t.Errorf("%s: %d requests", model, len(reqs))
		}
	}
}
