package codextest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// ---- unit tests: SSE output and request parsing ----

// parseSSE splits a stream into (event name, data) pairs.
func parseSSE(t *testing.T, stream string) (names []string, datas []map[string]any) {
	t.Helper()
	for _, block := range strings.Split(strings.TrimSuffix(stream, "\n\n"), "\n\n") {
		lines := strings.Split(block, "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[0], "event: ") || !strings.HasPrefix(lines[1], "data: ") {
			t.Fatalf("malformed SSE block %q", block)
		}
		var d map[string]any
		if err := json.Unmarshal([]byte(strings.TrimPrefix(lines[1], "data: ")), &d); err != nil {
			t.Fatalf("SSE data not JSON: %v in %q", err, block)
		}
		names = append(names, strings.TrimPrefix(lines[0], "event: "))
		datas = append(datas, d)
	}
	return names, datas
}

func TestReplyEvents(t *testing.T) {
	const (
		created   = "response.created"
		added     = "response.output_item.added"
		delta     = "response.output_text.delta"
		done      = "response.output_item.done"
		completed = "response.completed"
	)
	tests := []struct {
		name       string
		reply      Reply
		wantNames  []string
		wantText   string
		wantDeltas []string
		wantPause  int
		wantCall   string // arguments of the function call, "" for none
	}{
		{
			name:       "text in three deltas",
			reply:      Reply{Text: "reply: hello"},
			wantNames:  []string{created, added, delta, delta, delta, done, completed},
			wantText:   "reply: hello",
			wantDeltas: []string{"repl", "y: h", "ello"},
			wantPause:  2,
		},
		{
			name:       "short text, one rune per delta",
			reply:      Reply{Text: "hé"},
			wantNames:  []string{created, added, delta, delta, done, completed},
			wantText:   "hé",
			wantDeltas: []string{"h", "é"},
			wantPause:  2,
		},
		{
			name:       "explicit chunks",
			reply:      Reply{Text: "ignored", Chunks: []string{"a", "b", "c", "d"}},
			wantNames:  []string{created, added, delta, delta, delta, delta, done, completed},
			wantText:   "abcd",
			wantDeltas: []string{"a", "b", "c", "d"},
			wantPause:  2,
		},
		{
			name:       "ChunkBytes cuts by bytes, never inside a rune",
			reply:      Reply{Text: "abcdéfg", ChunkBytes: 3},
			wantNames:  []string{created, added, delta, delta, delta, done, completed},
			wantText:   "abcdéfg",
			wantDeltas: []string{"abc", "dé", "fg"},
			wantPause:  2,
		},
		{
			name:      "empty text still sends a message",
			reply:     Reply{},
			wantNames: []string{created, added, done, completed},
			wantPause: 0,
		},
		{
			name:      "function call only",
			reply:     Reply{FunctionCall: &FunctionCall{Cmd: "echo 'hi'"}},
			wantNames: []string{created, added, done, completed},
			wantPause: 0,
			wantCall:  `{"cmd":"echo 'hi'","yield_time_ms":30000}`,
		},
		{
			name:       "text then function call",
			reply:      Reply{Text: "ok", FunctionCall: &FunctionCall{Arguments: `{"cmd":"ls","login":false}`, CallID: "c9"}},
			wantNames:  []string{created, added, delta, delta, done, added, done, completed},
			wantText:   "ok",
			wantDeltas: []string{"o", "k"},
			wantPause:  2,
			wantCall:   `{"cmd":"ls","login":false}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			events, pause := replyEvents(7, tc.reply)
			var stream strings.Builder
			for _, e := range events {
				stream.Write(e.encode())
			}
			names, datas := parseSSE(t, stream.String())
			if !reflect.DeepEqual(names, tc.wantNames) {
				t.Fatalf("events = %v, want %v", names, tc.wantNames)
			}
			if pause != tc.wantPause {
				t.Errorf("pause after event %d, want %d", pause, tc.wantPause)
			}
			var deltas []string
			var msgText, callArgs string
			for i, d := range datas {
				if d["type"] != names[i] {
					t.Errorf("event %d: data type %v != event name %s", i, d["type"], names[i])
				}
				switch names[i] {
				case delta:
					deltas = append(deltas, d["delta"].(string))
					if d["item_id"] != "msg_7" {
						t.Errorf("delta item_id = %v", d["item_id"])
					}
				case done:
					item := d["item"].(map[string]any)
					switch item["type"] {
					case "message":
						msgText = item["content"].([]any)[0].(map[string]any)["text"].(string)
					case "function_call":
						callArgs = item["arguments"].(string)
						if item["name"] != "exec_command" {
							t.Errorf("function name = %v", item["name"])
						}
						wantID := tc.reply.FunctionCall.CallID
						if wantID == "" {
							wantID = "call_7"
						}
						if item["call_id"] != wantID {
							t.Errorf("call_id = %v, want %s", item["call_id"], wantID)
						}
					}
				case created, completed:
					if d["response"].(map[string]any)["id"] != "resp_7" {
						t.Errorf("%s response id = %v", names[i], d["response"])
					}
				}
			}
			if !reflect.DeepEqual(deltas, tc.wantDeltas) {
				t.Errorf("deltas = %q, want %q", deltas, tc.wantDeltas)
			}
			if msgText != tc.wantText {
				t.Errorf("message text = %q, want %q", msgText, tc.wantText)
			}
			if callArgs != tc.wantCall {
				t.Errorf("call arguments = %q, want %q", callArgs, tc.wantCall)
			}
		})
	}
}

func TestSplitBytes(t *testing.T) {
	long := strings.Repeat("0123456789", 1000)
	tests := []struct {
		name string
		s    string
		n    int
		want int // pieces
	}{
		{"empty", "", 4, 0},
		{"shorter than n", "abc", 4, 1},
		{"exact multiple", long, 1000, 10},
		{"remainder", long, 3000, 4},
		{"rune wider than n", "ééé", 1, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := splitBytes(tc.s, tc.n)
			if len(got) != tc.want {
				t.Fatalf("%d pieces, want %d", len(got), tc.want)
			}
			if strings.Join(got, "") != tc.s {
				t.Fatal("pieces do not concatenate to the text")
			}
			for _, p := range got {
				if !utf8.ValidString(p) || (len(p) > tc.n && utf8.RuneCountInString(p) > 1) {
					t.Fatalf("piece %q: cut inside a rune or over %d bytes", p, tc.n)
				}
			}
		})
	}
}

func TestLogTextIsShort(t *testing.T) {
	if got := logText("short"); got != "short" {
		t.Errorf("logText(short) = %q", got)
	}
	got := logText(strings.Repeat("é", 1<<20))
	if len(got) > 300 || !strings.HasSuffix(got, "(2097152 bytes)") || !utf8.ValidString(got) {
		t.Errorf("logText(2 MB) = %q", got)
	}
}

func TestParseRequest(t *testing.T) {
	// Shapes copied from a real Codex 0.169.0 request, shortened.
	dev := `{"type":"message","role":"developer","content":[{"type":"input_text","text":"You are a coding agent running in the Codex CLI"}]}`
	env := `{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n  <cwd>/tmp/x</cwd>\n</environment_context>"}]}`
	user := func(s string) string {
		return fmt.Sprintf(`{"type":"message","role":"user","content":[{"type":"input_text","text":%q}]}`, s)
	}
	asst := func(s string) string {
		return fmt.Sprintf(`{"type":"message","role":"assistant","status":"completed","content":[{"type":"output_text","text":%q,"annotations":[]}]}`, s)
	}
	body := func(items ...string) string {
		return `{"model":"mock-model","stream":true,"input":[` + strings.Join(items, ",") + `]}`
	}
	tests := []struct {
		name      string
		body      string
		wantUser  []string
		wantLast  string
		wantAsst  []string
		wantCalls []FunctionCallOutput
		wantErr   bool
	}{
		{
			name:     "first turn",
			body:     body(dev, env, user("hello one")),
			wantUser: []string{"hello one"},
			wantLast: "hello one",
		},
		{
			name:     "second turn keeps history",
			body:     body(dev, env, user("hello one"), asst("reply: hello one"), user("hello two")),
			wantUser: []string{"hello one", "hello two"},
			wantLast: "hello two",
			wantAsst: []string{"reply: hello one"},
		},
		{
			name: "injected items of every kind are dropped",
			body: body(dev, env, user("# AGENTS.md instructions for /tmp/x\n\n<INSTRUCTIONS>\nbe nice\n</INSTRUCTIONS>"),
				user("a"), user("<turn_aborted>\nThe user interrupted.\n</turn_aborted>"), user("b")),
			wantUser: []string{"a", "b"},
			wantLast: "b",
		},
		{
			name:     "string content and several parts",
			body:     body(`{"role":"user","content":"plain"}`, `{"type":"message","role":"user","content":[{"type":"input_text","text":"x"},{"type":"input_image","image_url":"data:"},{"type":"input_text","text":"y"}]}`),
			wantUser: []string{"plain", "x\ny"},
			wantLast: "x\ny",
		},
		{
			name: "function call output",
			body: body(user("run it"),
				`{"type":"function_call","call_id":"call_1","name":"exec_command","arguments":"{\"cmd\":\"ls\"}"}`,
				`{"type":"function_call_output","call_id":"call_1","output":"declined"}`,
				`{"type":"function_call_output","call_id":"call_2","output":[{"type":"input_text","text":"o"},{"type":"input_text","text":"k"}]}`),
			wantUser:  []string{"run it"},
			wantLast:  "run it",
			wantCalls: []FunctionCallOutput{{"call_1", "declined"}, {"call_2", "ok"}},
		},
		{
			name:    "bad JSON",
			body:    `{"input":`,
			wantErr: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := ParseRequest([]byte(tc.body))
			if (r.Err() != nil) != tc.wantErr {
				t.Fatalf("Err() = %v, want error %v", r.Err(), tc.wantErr)
			}
			if got := r.UserTexts(); !reflect.DeepEqual(got, tc.wantUser) {
				t.Errorf("UserTexts() = %q, want %q", got, tc.wantUser)
			}
			if got := r.LastUserText(); got != tc.wantLast {
				t.Errorf("LastUserText() = %q, want %q", got, tc.wantLast)
			}
			if got := r.AssistantTexts(); !reflect.DeepEqual(got, tc.wantAsst) {
				t.Errorf("AssistantTexts() = %q, want %q", got, tc.wantAsst)
			}
			if got := r.FunctionCallOutputs(); !reflect.DeepEqual(got, tc.wantCalls) {
				t.Errorf("FunctionCallOutputs() = %+v, want %+v", got, tc.wantCalls)
			}
		})
	}
}

func TestModelServerHTTP(t *testing.T) {
	ms := StartModelServer(t)
	ms.SetReply(func(r Request) Reply {
		if r.LastUserText() == "fail" {
			return Reply{Status: http.StatusTeapot, ErrorMessage: "no"}
		}
		return DefaultReply(r)
	})
	post := func(text string) (*http.Response, string) {
		t.Helper()
		body := fmt.Sprintf(`{"model":"mock-model","stream":true,"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":%q}]}]}`, text)
		resp, err := http.Post(ms.URL()+"/responses", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, stream := post("hi")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if !strings.Contains(stream, `"text":"reply: hi"`) {
		t.Errorf("stream lacks the default reply:\n%s", stream)
	}
	resp, body := post("fail")
	if resp.StatusCode != http.StatusTeapot || !strings.Contains(body, `"message":"no"`) {
		t.Errorf("error reply: %d %s", resp.StatusCode, body)
	}
	if r, err := http.Get(ms.URL() + "/models"); err != nil || r.StatusCode != 200 {
		t.Errorf("GET /models: %v %v", r, err)
	} else {
		r.Body.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	reqs, err := ms.WaitRequests(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if reqs[0].Seq != 1 || reqs[1].LastUserText() != "fail" {
		t.Errorf("requests recorded wrong: %+v", reqs)
	}
	if got := ms.OtherRequests(); !reflect.DeepEqual(got, []string{"GET /v1/models"}) {
		t.Errorf("OtherRequests() = %v", got)
	}
}

// A Delay must end as soon as the client goes away, not hold the handler.
func TestModelServerDelayEndsOnDisconnect(t *testing.T) {
	ms := StartModelServer(t)
	ms.SetReply(func(Request) Reply { return Reply{Text: "slow", Delay: time.Minute} })
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ms.URL()+"/responses", strings.NewReader(`{"input":[]}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	// The first delta arrives before the delay.
	buf := make([]byte, 4096)
	var got strings.Builder
	for !strings.Contains(got.String(), "response.output_text.delta") {
		n, err := resp.Body.Read(buf)
		if err != nil {
			t.Fatalf("read: %v (got %q)", err, got.String())
		}
		got.Write(buf[:n])
	}
	cancel()
	resp.Body.Close()
	deadline := time.Now().Add(5 * time.Second)
	for ms.canceledStreams() != 1 {
		if time.Now().After(deadline) {
			t.Fatal("handler still waiting after the client disconnected")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestFindBinaryEnv(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "codex")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(BinaryEnv, exe)
	if p, err := FindBinary(); err != nil || p != exe {
		t.Errorf("FindBinary() = %q, %v; want %q", p, err, exe)
	}
	t.Setenv(BinaryEnv, filepath.Join(dir, "missing"))
	if _, err := FindBinary(); err == nil {
		t.Error("FindBinary() with a missing $CODEX_BIN: no error")
	}
}

// fakeTB records Fatalf and Skipf instead of stopping the test.
type fakeTB struct {
	testing.TB
	fatal, skip string
}

func (f *fakeTB) Helper()                        {}
func (f *fakeTB) Fatalf(format string, a ...any) { f.fatal = fmt.Sprintf(format, a...) }
func (f *fakeTB) Skipf(format string, a ...any)  { f.skip = fmt.Sprintf(format, a...) }

func TestBinaryModuleRoot(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(sub)
	t.Setenv(BinaryEnv, "")

	// Missing: skip locally, fail under CI, both with the install hint.
	t.Setenv("CI", "")
	f := &fakeTB{}
	Binary(f)
	if f.fatal != "" || !strings.Contains(f.skip, "make tools") {
		t.Errorf("without CI: fatal %q, skip %q", f.fatal, f.skip)
	}
	t.Setenv("CI", "true")
	f = &fakeTB{}
	Binary(f)
	if f.skip != "" || !strings.Contains(f.fatal, "npm install --prefix .tools/codex") {
		t.Errorf("with CI: fatal %q, skip %q", f.fatal, f.skip)
	}

	// Present under the module root: found from a subdirectory.
	exe := filepath.Join(root, binaryRel)
	if err := os.MkdirAll(filepath.Dir(exe), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	f = &fakeTB{}
	if got := Binary(f); got != exe || f.fatal != "" || f.skip != "" {
		t.Errorf("Binary() = %q (fatal %q, skip %q), want %q", got, f.fatal, f.skip, exe)
	}
}

// ---- end to end against the real codex app-server ----

// rpcMsg is any JSON-RPC message from the app-server.
type rpcMsg struct {
	ID     *json.RawMessage `json:"id"`
	Method string           `json:"method"`
	Params json.RawMessage  `json:"params"`
	Result json.RawMessage  `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// appServer is a minimal hand-written JSON-RPC client for `codex app-server`.
type appServer struct {
	t      *testing.T
	stdin  io.WriteCloser
	mu     sync.Mutex
	nextID int
	wait   map[string]chan rpcMsg // by request id
	events chan rpcMsg            // notifications and server requests, in order
}

// startAppServer runs codex app-server against ms with a fresh CODEX_HOME and
// performs the initialize handshake. The process is stopped at cleanup, before
// the temp dirs are removed.
func startAppServer(t *testing.T, ms *ModelServer) *appServer {
	t.Helper()
	bin := Binary(t)
	home := NewCodexHome(t, ms.URL())
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "app-server")
	cmd.Env = append(os.Environ(), "CODEX_HOME="+home, "RUST_LOG=warn")
	cmd.WaitDelay = 5 * time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	a := &appServer{t: t, stdin: stdin, wait: map[string]chan rpcMsg{}, events: make(chan rpcMsg, 4096)}
	readDone := make(chan struct{})
	go a.read(stdout, readDone)
	t.Cleanup(func() {
		// Closing stdin asks the server to exit; kill it if it does not.
		stdin.Close()
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			t.Log("app-server did not exit on stdin EOF; killing it")
			cancel()
			<-exited
		}
		cancel()
		<-readDone
		stderr.Close()
		if t.Failed() {
			if b, err := os.ReadFile(stderr.Name()); err == nil {
				t.Logf("app-server stderr:\n%s", b)
			}
		}
	})

	a.call("initialize", map[string]any{
		"clientInfo":   map[string]any{"name": "tuttid-test", "title": nil, "version": "0"},
		"capabilities": nil,
	}, nil)
	a.notify("initialized", nil)
	return a
}

func (a *appServer) read(r io.Reader, done chan struct{}) {
	defer close(done)
	defer close(a.events)
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var m rpcMsg
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			a.t.Logf("app-server: non-JSON line %q", sc.Text())
			continue
		}
		if m.ID != nil && m.Method == "" { // a response to one of our calls
			a.mu.Lock()
			ch := a.wait[string(*m.ID)]
			delete(a.wait, string(*m.ID))
			a.mu.Unlock()
			if ch != nil {
				ch <- m
			}
			continue
		}
		a.events <- m
	}
}

func (a *appServer) send(v any) {
	a.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		a.t.Fatal(err)
	}
	if _, err := a.stdin.Write(append(b, '\n')); err != nil {
		a.t.Fatalf("write to app-server: %v", err)
	}
}

func (a *appServer) notify(method string, params any) {
	a.t.Helper()
	msg := map[string]any{"method": method}
	if params != nil {
		msg["params"] = params
	}
	a.send(msg)
}

// call sends a request, waits up to 10 s for its result and decodes it into out.
func (a *appServer) call(method string, params, out any) {
	a.t.Helper()
	a.mu.Lock()
	a.nextID++
	id := a.nextID
	ch := make(chan rpcMsg, 1)
	a.wait[fmt.Sprint(id)] = ch
	a.mu.Unlock()
	a.send(map[string]any{"id": id, "method": method, "params": params})
	select {
	case m := <-ch:
		if m.Error != nil {
			a.t.Fatalf("%s: error %d %s", method, m.Error.Code, m.Error.Message)
		}
		if out != nil {
			if err := json.Unmarshal(m.Result, out); err != nil {
				a.t.Fatalf("%s: decode result %s: %v", method, m.Result, err)
			}
		}
	case <-time.After(10 * time.Second):
		a.t.Fatalf("%s: no response in 10s", method)
	}
}

// next returns the next notification or server request for which keep is
// true, passing every one it reads (including the returned one) to seen.
func (a *appServer) next(timeout time.Duration, keep func(rpcMsg) bool, seen func(rpcMsg)) rpcMsg {
	a.t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case m, ok := <-a.events:
			if !ok {
				a.t.Fatal("app-server closed stdout")
			}
			if seen != nil {
				seen(m)
			}
			if keep(m) {
				return m
			}
		case <-deadline:
			a.t.Fatalf("no matching app-server message in %s", timeout)
		}
	}
}

func method(name string) func(rpcMsg) bool {
	return func(m rpcMsg) bool { return m.Method == name }
}

type thread struct {
	ID string `json:"id"`
}

type turn struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

type item struct {
	Type string `json:"type"`
	ID   string `json:"id"`
	Text string `json:"text"`
}

// turnResult is what a test learns from one turn's notifications.
type turnResult struct {
	turn        turn
	deltas      []string
	agentTexts  []string // agentMessage item/completed texts
	warnings    []string // warning / configWarning / error notifications
	serverCalls []rpcMsg // server-to-client requests seen
}

// collector returns a seen func that fills r for one turn.
func (r *turnResult) collect() func(rpcMsg) {
	return func(m rpcMsg) {
		switch m.Method {
		case "item/agentMessage/delta":
			var p struct{ Delta string }
			json.Unmarshal(m.Params, &p)
			r.deltas = append(r.deltas, p.Delta)
		case "item/completed":
			var p struct{ Item item }
			json.Unmarshal(m.Params, &p)
			if p.Item.Type == "agentMessage" {
				r.agentTexts = append(r.agentTexts, p.Item.Text)
			}
		case "warning", "configWarning", "error":
			r.warnings = append(r.warnings, m.Method+": "+string(m.Params))
		case "turn/completed":
			var p struct{ Turn turn }
			json.Unmarshal(m.Params, &p)
			r.turn = p.Turn
		}
		if m.ID != nil && m.Method != "" {
			r.serverCalls = append(r.serverCalls, m)
		}
	}
}

func (a *appServer) startThread(params map[string]any) string {
	a.t.Helper()
	var res struct{ Thread thread }
	a.call("thread/start", params, &res)
	if res.Thread.ID == "" {
		a.t.Fatal("thread/start: no thread id")
	}
	return res.Thread.ID
}

func (a *appServer) startTurn(threadID, text string) string {
	a.t.Helper()
	var res struct{ Turn turn }
	a.call("turn/start", map[string]any{
		"threadId": threadID,
		"input":    []any{map[string]any{"type": "text", "text": text}},
	}, &res)
	return res.Turn.ID
}

// runTurn starts a turn and collects its notifications until turn/completed.
func (a *appServer) runTurn(threadID, text string) turnResult {
	a.t.Helper()
	a.startTurn(threadID, text)
	var r turnResult
	a.next(15*time.Second, method("turn/completed"), r.collect())
	return r
}

// failOnConfigWarnings catches config keys this Codex version ignores, the
// sign that Config went stale after an upgrade.
func failOnConfigWarnings(t *testing.T, warnings []string) {
	t.Helper()
	for _, w := range warnings {
		if strings.Contains(w, "unrecognized configuration") {
			t.Errorf("codex ignores part of Config: %s", w)
		}
	}
}

// TestAppServerTurns runs two real turns and checks what reached the model
// and what came back, including the history of the second request.
func TestAppServerTurns(t *testing.T) {
	t.Parallel()
	ms := StartModelServer(t)
	ms.SetReply(func(r Request) Reply { return Reply{Text: "scripted answer to " + r.LastUserText()} })
	a := startAppServer(t, ms)
	threadID := a.startThread(map[string]any{"cwd": t.TempDir()})

	r1 := a.runTurn(threadID, "first message")
	failOnConfigWarnings(t, r1.warnings)
	if r1.turn.Status != "completed" {
		t.Fatalf("turn 1 status %q (%+v), warnings %v", r1.turn.Status, r1.turn.Error, r1.warnings)
	}
	want1 := "scripted answer to first message"
	if !reflect.DeepEqual(r1.agentTexts, []string{want1}) {
		t.Errorf("turn 1 agentMessage texts = %q, want [%q]", r1.agentTexts, want1)
	}
	if len(r1.deltas) < 2 || strings.Join(r1.deltas, "") != want1 {
		t.Errorf("turn 1 deltas = %q: want several that add up to %q", r1.deltas, want1)
	}

	r2 := a.runTurn(threadID, "second message")
	if r2.turn.Status != "completed" || !reflect.DeepEqual(r2.agentTexts, []string{"scripted answer to second message"}) {
		t.Errorf("turn 2: status %q, texts %q", r2.turn.Status, r2.agentTexts)
	}

	reqs := ms.Requests()
	if len(reqs) != 2 {
		t.Fatalf("model got %d requests, want 2", len(reqs))
	}
	for i, r := range reqs {
		if r.ThreadID() != threadID {
			t.Errorf("request %d: thread id %q, want %q", i+1, r.ThreadID(), threadID)
		}
	}
	if got := reqs[0].UserTexts(); !reflect.DeepEqual(got, []string{"first message"}) {
		t.Errorf("request 1 UserTexts = %q", got)
	}
	if got := reqs[1].UserTexts(); !reflect.DeepEqual(got, []string{"first message", "second message"}) {
		t.Errorf("request 2 UserTexts = %q, want both turns' texts", got)
	}
	if got := reqs[1].AssistantTexts(); !reflect.DeepEqual(got, []string{want1}) {
		t.Errorf("request 2 AssistantTexts = %q, want [%q]", got, want1)
	}
	if !strings.Contains(string(reqs[0].Body), "<environment_context>") {
		t.Error("request 1 has no <environment_context> item: the filter in UserTexts is untested")
	}
	if other := ms.OtherRequests(); len(other) > 0 {
		t.Errorf("codex called other endpoints: %v", other)
	}
}

// TestAppServerInterruptAndFailure covers a delayed reply interrupted
// mid-stream and an HTTP error that fails a turn.
func TestAppServerInterruptAndFailure(t *testing.T) {
	t.Parallel()
	ms := StartModelServer(t)
	ms.SetReply(func(r Request) Reply {
		switch r.LastUserText() {
		case "slow":
			return Reply{Text: "partial and then more", Delay: time.Minute}
		case "fail":
			return Reply{Status: http.StatusInternalServerError}
		}
		return DefaultReply(r)
	})
	a := startAppServer(t, ms)
	threadID := a.startThread(map[string]any{"cwd": t.TempDir()})

	turnID := a.startTurn(threadID, "slow")
	var r turnResult
	a.next(15*time.Second, method("item/agentMessage/delta"), r.collect())
	a.call("turn/interrupt", map[string]any{"threadId": threadID, "turnId": turnID}, nil)
	start := time.Now()
	a.next(10*time.Second, method("turn/completed"), r.collect())
	if r.turn.Status != "interrupted" {
		t.Errorf("interrupted turn status %q", r.turn.Status)
	}
	for ms.canceledStreams() < 1 {
		if time.Since(start) > 5*time.Second {
			t.Fatal("the model stream kept waiting after the interrupt")
		}
		time.Sleep(10 * time.Millisecond)
	}

	rf := a.runTurn(threadID, "fail")
	if rf.turn.Status != "failed" || rf.turn.Error == nil {
		t.Errorf("failing turn: status %q error %+v", rf.turn.Status, rf.turn.Error)
	}

	ra := a.runTurn(threadID, "after")
	if ra.turn.Status != "completed" || !reflect.DeepEqual(ra.agentTexts, []string{"reply: after"}) {
		t.Errorf("turn after: status %q texts %q", ra.turn.Status, ra.agentTexts)
	}
	reqs := ms.Requests()
	if len(reqs) != 3 {
		t.Fatalf("model got %d requests, want 3 (no retries)", len(reqs))
	}
	// The <turn_aborted> marker Codex adds after an interrupt is not user text.
	if got := reqs[2].UserTexts(); !reflect.DeepEqual(got, []string{"slow", "fail", "after"}) {
		t.Errorf("request 3 UserTexts = %q", got)
	}
	if !strings.Contains(string(reqs[2].Body), "<turn_aborted>") {
		t.Log("note: no <turn_aborted> item after the interrupt")
	}
}

// TestAppServerApproval makes the model call exec_command under approval
// policy "untrusted": the app-server asks the client, the test declines, and
// Codex sends the model the declined call's output.
func TestAppServerApproval(t *testing.T) {
	t.Parallel()
	ms := StartModelServer(t)
	ms.SetReply(func(r Request) Reply {
		if r.HasFunctionCallOutputFor("call_1") {
			return Reply{Text: "done"}
		}
		return Reply{Text: "let me look", FunctionCall: &FunctionCall{Cmd: "touch approved-file", CallID: "call_1"}}
	})
	a := startAppServer(t, ms)
	threadID := a.startThread(map[string]any{"cwd": t.TempDir(), "approvalPolicy": "untrusted"})
	a.startTurn(threadID, "please run it")

	var r turnResult
	req := a.next(15*time.Second, func(m rpcMsg) bool { return m.ID != nil && m.Method != "" }, r.collect())
	if req.Method != "item/commandExecution/requestApproval" {
		t.Fatalf("server request %s, want item/commandExecution/requestApproval", req.Method)
	}
	var p struct {
		ItemID  string `json:"itemId"`
		Command string `json:"command"`
	}
	json.Unmarshal(req.Params, &p)
	if p.ItemID != "call_1" || !strings.Contains(p.Command, "touch approved-file") {
		t.Errorf("approval params %s", req.Params)
	}
	a.send(map[string]any{"id": req.ID, "result": map[string]any{"decision": "decline"}})
	a.next(15*time.Second, method("turn/completed"), r.collect())
	if r.turn.Status != "completed" || !reflect.DeepEqual(r.agentTexts, []string{"let me look", "done"}) {
		t.Errorf("turn: status %q texts %q", r.turn.Status, r.agentTexts)
	}
	reqs := ms.Requests()
	if len(reqs) != 2 {
		t.Fatalf("model got %d requests, want 2", len(reqs))
	}
	outs := reqs[1].FunctionCallOutputs()
	if len(outs) != 1 || outs[0].CallID != "call_1" {
		t.Errorf("request 2 function call outputs = %+v", outs)
	} else {
		t.Logf("declined call output sent to the model: %q", outs[0].Output)
	}
}
