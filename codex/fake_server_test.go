package codex

// A scripted stand-in for `codex app-server`, run by re-executing the test
// binary (see TestMain). It speaks the same wire format and keeps its
// threads in a state file so that a restarted fake still knows them, like
// Codex's rollouts on disk. Behaviour switches come from CODEX_FAKE_SCENARIO
// (comma-separated flags); every request it receives and every answer it
// gets to its own requests is appended to CODEX_FAKE_DIR/log.jsonl.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
)

const (
	fakeScenarioEnv = "CODEX_FAKE_SCENARIO"
	fakeDirEnv      = "CODEX_FAKE_DIR"
)

func TestMain(m *testing.M) {
	if sc := os.Getenv(fakeScenarioEnv); sc != "" {
		os.Exit(runFake(sc, os.Getenv(fakeDirEnv)))
	}
	os.Exit(m.Run())
}

type fakeTurn struct {
	ID     string            `json:"id"`
	Status string            `json:"status"`
	Items  []json.RawMessage `json:"items"`
}

type fakeThread struct {
	ID           string     `json:"id"`
	ForkedFromID *string    `json:"forkedFromId"`
	Cwd          string     `json:"cwd"`
	Turns        []fakeTurn `json:"turns"`
}

type fakeServer struct {
	flags map[string]bool
	dir   string
	gen   int

	wmu sync.Mutex
	out *bufio.Writer

	mu      sync.Mutex
	threads map[string]*fakeThread
	loaded  map[string]bool
	active  map[string]chan struct{} // turn id -> closed on interrupt
	nextReq int
	replies map[int]chan json.RawMessage
}

func runFake(scenario, dir string) int {
	f := &fakeServer{
		flags:   map[string]bool{},
		dir:     dir,
		out:     bufio.NewWriter(os.Stdout),
		threads: map[string]*fakeThread{},
		loaded:  map[string]bool{},
		active:  map[string]chan struct{}{},
		replies: map[int]chan json.RawMessage{},
	}
	for _, s := range strings.Split(scenario, ",") {
		f.flags[s] = true
	}
	f.gen = f.bumpGen()
	f.loadState()
	fmt.Fprintln(os.Stderr, "fake app-server up, gen", f.gen)

	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 {
			f.handle(line)
		}
		if err != nil {
			return 0
		}
	}
}

func (f *fakeServer) bumpGen() int {
	p := filepath.Join(f.dir, "gen")
	b, _ := os.ReadFile(p)
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	n++
	_ = os.WriteFile(p, []byte(strconv.Itoa(n)), 0o644)
	return n
}

func (f *fakeServer) loadState() {
	b, err := os.ReadFile(filepath.Join(f.dir, "threads.json"))
	if err == nil {
		_ = json.Unmarshal(b, &f.threads)
	}
}

// saveState must be called with f.mu held.
func (f *fakeServer) saveState() {
	b, _ := json.Marshal(f.threads)
	_ = os.WriteFile(filepath.Join(f.dir, "threads.json"), b, 0o644)
}

func (f *fakeServer) logLine(v map[string]any) {
	v["gen"] = f.gen
	b, _ := json.Marshal(v)
	fh, err := os.OpenFile(filepath.Join(f.dir, "log.jsonl"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer fh.Close()
	fh.Write(append(b, '\n'))
}

func (f *fakeServer) send(v any) {
	b, _ := json.Marshal(v)
	f.wmu.Lock()
	defer f.wmu.Unlock()
	if f.flags["malformed"] {
		f.out.WriteString("this is not json\n\n{\"unterminated\":\n[1,2]\n")
		// A reply to no pending call, over the test's line bound: skipped.
		f.out.WriteString(`{"id":999999,"result":"` + strings.Repeat("x", 4096) + "\"}\n")
	}
	f.out.Write(append(b, '\n'))
	f.out.Flush()
}

func (f *fakeServer) reply(id json.RawMessage, result any) {
	f.send(map[string]any{"id": id, "result": result})
}

func (f *fakeServer) fail(id json.RawMessage, msg string) {
	f.send(map[string]any{"id": id, "error": map[string]any{"code": -32600, "message": msg}})
}

func (f *fakeServer) notify(method string, params any) {
	f.send(map[string]any{"method": method, "params": params})
}

// request sends a server-to-client request and waits for the answer.
func (f *fakeServer) request(method string, params any) json.RawMessage {
	f.mu.Lock()
	id := f.nextReq
	f.nextReq++
	ch := make(chan json.RawMessage, 1)
	f.replies[id] = ch
	f.mu.Unlock()
	f.send(map[string]any{"id": id, "method": method, "params": params})
	return <-ch
}

func (f *fakeServer) handle(line []byte) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(line, &m); err != nil {
		return
	}
	if m.Method == "" { // an answer to one of our requests
		var id int
		_ = json.Unmarshal(m.ID, &id)
		f.mu.Lock()
		ch := f.replies[id]
		delete(f.replies, id)
		f.mu.Unlock()
		ans := m.Result
		if m.Error != nil {
			ans = json.RawMessage(`{"error":` + string(m.Error) + `}`)
		}
		if ch != nil {
			ch <- ans
		}
		return
	}
	f.logLine(map[string]any{"dir": "in", "method": m.Method, "params": m.Params})
	if m.ID == nil {
		return // a notification (initialized)
	}
	if f.flags["hang:"+m.Method] {
		return
	}
	if f.flags["slow:"+m.Method] {
		// Answers after the client's timeout (a late reply).
		time.Sleep(slowReply)
	}
	var p struct {
		ThreadID      string `json:"threadId"`
		TurnID        string `json:"turnId"`
		LastTurnID    string `json:"lastTurnId"`
		Cwd           string `json:"cwd"`
		Cursor        string `json:"cursor"`
		Limit         int    `json:"limit"`
		SortDirection string `json:"sortDirection"`
		IncludeTurns  bool   `json:"includeTurns"`
		Input         []struct {
			Text string `json:"text"`
		} `json:"input"`
	}
	_ = json.Unmarshal(m.Params, &p)

	switch m.Method {
	case "initialize":
		f.reply(m.ID, map[string]any{"userAgent": "fake/0.0.0", "codexHome": f.dir, "platformFamily": "unix", "platformOs": "linux"})
	case "thread/start":
		if f.flags["crash_on_thread_start"] && f.gen == 1 {
			os.Exit(3)
		}
		f.mu.Lock()
		t := &fakeThread{ID: uuid.Must(uuid.NewV7()).String(), Cwd: p.Cwd, Turns: []fakeTurn{}}
		f.threads[t.ID], f.loaded[t.ID] = t, true
		f.saveState()
		resp := f.threadResponse(t, false)
		f.mu.Unlock()
		f.reply(m.ID, resp)
		f.notify("thread/started", map[string]any{"thread": resp["thread"]})
	case "thread/resume":
		f.mu.Lock()
		t, ok := f.threads[p.ThreadID]
		if ok {
			f.loaded[t.ID] = true
		}
		var resp map[string]any
		if ok {
			resp = f.threadResponse(t, false)
		}
		f.mu.Unlock()
		if !ok {
			f.fail(m.ID, "no rollout found for thread id "+p.ThreadID)
			return
		}
		f.reply(m.ID, resp)
	case "turn/start":
		f.turnStart(m.ID, p.ThreadID, p.Input[0].Text)
	case "turn/interrupt":
		f.mu.Lock()
		ch, ok := f.active[p.TurnID]
		delete(f.active, p.TurnID)
		f.mu.Unlock()
		if !ok {
			f.fail(m.ID, "no active turn to interrupt")
			return
		}
		f.reply(m.ID, map[string]any{})
		close(ch)
	case "thread/turns/list":
		if f.flags["no_turns_list"] {
			f.fail(m.ID, "Invalid request: unknown variant `thread/turns/list`, expected one of `initialize`")
			return
		}
		if f.flags["fork_no_history"] {
			f.fail(m.ID, "history store unavailable")
			return
		}
		f.mu.Lock()
		t, ok := f.threads[p.ThreadID]
		var turns []fakeTurn
		if ok {
			turns = slices.Clone(t.Turns)
		}
		f.mu.Unlock()
		switch {
		case !ok:
			f.fail(m.ID, "thread not loaded: "+p.ThreadID)
		case len(turns) == 0:
			f.fail(m.ID, "thread "+p.ThreadID+" is not materialized yet; thread/turns/list is unavailable before first user message")
		default:
			if p.SortDirection == "desc" {
				slices.Reverse(turns)
			}
			start, _ := strconv.Atoi(p.Cursor)
			end := len(turns)
			if p.Limit > 0 && start+p.Limit < end {
				end = start + p.Limit
			}
			var next any
			if end < len(turns) {
				next = strconv.Itoa(end)
			}
			f.reply(m.ID, map[string]any{"data": turns[start:end], "nextCursor": next, "backwardsCursor": nil})
		}
	case "thread/read":
		f.mu.Lock()
		t, ok := f.threads[p.ThreadID]
		var resp map[string]any
		if ok {
			resp = f.threadResponse(t, p.IncludeTurns)
		}
		f.mu.Unlock()
		if !ok || f.flags["fork_no_history"] {
			f.fail(m.ID, "thread not loaded: "+p.ThreadID)
			return
		}
		f.reply(m.ID, map[string]any{"thread": resp["thread"]})
	case "thread/fork":
		f.fork(m.ID, p.ThreadID, p.LastTurnID)
	case "thread/archive":
		f.mu.Lock()
		_, ok := f.threads[p.ThreadID]
		delete(f.threads, p.ThreadID)
		f.saveState()
		f.mu.Unlock()
		if !ok {
			f.fail(m.ID, "no rollout found for thread id "+p.ThreadID)
			return
		}
		f.reply(m.ID, map[string]any{})
	default:
		f.fail(m.ID, "Invalid request: unknown variant `"+m.Method+"`, expected one of `initialize`")
	}
}

// threadResponse must be called with f.mu held.
func (f *fakeServer) threadResponse(t *fakeThread, withTurns bool) map[string]any {
	turns := []fakeTurn{}
	if withTurns {
		turns = t.Turns
	}
	status := "notLoaded"
	if f.loaded[t.ID] {
		status = "idle"
	}
	return map[string]any{
		"thread": map[string]any{
			"id": t.ID, "forkedFromId": t.ForkedFromID, "cwd": t.Cwd,
			"model": "fake-model", "modelProvider": "fake",
			"status": map[string]any{"type": status}, "turns": turns,
		},
		"model": "fake-model", "modelProvider": "fake", "cwd": t.Cwd, "reasoningEffort": nil,
	}
}

func (f *fakeServer) fork(id json.RawMessage, source, lastTurn string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	src, ok := f.threads[source]
	if !ok {
		f.fail(id, "no rollout found for thread id "+source)
		return
	}
	turns := slices.Clone(src.Turns)
	if lastTurn != "" {
		if _, running := f.active[lastTurn]; running {
			f.fail(id, fmt.Sprintf("lastTurnId '%s' identifies an in-progress turn", lastTurn))
			return
		}
		i := slices.IndexFunc(turns, func(t fakeTurn) bool { return t.ID == lastTurn })
		if i < 0 {
			f.fail(id, "turn not found: "+lastTurn)
			return
		}
		turns = turns[:i+1]
	}
	child := &fakeThread{ID: uuid.Must(uuid.NewV7()).String(), ForkedFromID: &src.ID, Cwd: src.Cwd, Turns: turns}
	f.threads[child.ID], f.loaded[child.ID] = child, true
	f.saveState()
	withTurns := !f.flags["fork_no_turns"] && !f.flags["fork_no_history"]
	f.reply(id, f.threadResponse(child, withTurns))
}

func (f *fakeServer) turnStart(id json.RawMessage, threadID, text string) {
	f.mu.Lock()
	if !f.loaded[threadID] {
		f.mu.Unlock()
		f.fail(id, "thread not found: "+threadID)
		return
	}
	turnID := uuid.Must(uuid.NewV7()).String()
	interrupted := make(chan struct{})
	f.active[turnID] = interrupted
	f.mu.Unlock()

	f.reply(id, map[string]any{"turn": map[string]any{"id": turnID, "items": []any{}, "status": "inProgress", "error": nil}})
	go f.runTurn(threadID, turnID, text, interrupted)
}

func (f *fakeServer) runTurn(threadID, turnID, text string, interrupted chan struct{}) {
	route := map[string]any{"threadId": threadID, "turnId": turnID}
	f.notify("thread/status/changed", map[string]any{"threadId": threadID, "status": map[string]any{"type": "active", "activeFlags": []any{}}})
	f.notify("turn/started", map[string]any{"threadId": threadID, "turn": map[string]any{"id": turnID, "items": []any{}, "status": "inProgress"}})
	if f.flags["crash_mid_turn"] && f.gen == 1 {
		os.Exit(3)
	}
	user, _ := json.Marshal(map[string]any{"type": "userMessage", "id": "u-" + turnID, "content": []any{map[string]any{"type": "text", "text": text}}})
	f.notify("item/started", map[string]any{"item": json.RawMessage(user), "threadId": threadID, "turnId": turnID})
	f.notify("item/completed", map[string]any{"item": json.RawMessage(user), "threadId": threadID, "turnId": turnID})
	f.notify("thread/tokenUsage/updated", route)

	if f.flags["approvals"] {
		f.askApprovals(threadID, turnID)
	}
	status := "completed"
	if f.flags["slow_turn"] {
		<-interrupted
		status = "interrupted"
	}
	reply := "echo: " + text
	agentItem := func(t string) json.RawMessage {
		b, _ := json.Marshal(map[string]any{"type": "agentMessage", "id": "a-" + turnID, "text": t})
		return b
	}
	items := []json.RawMessage{user}
	if status == "completed" {
		f.notify("item/started", map[string]any{"item": agentItem(""), "threadId": threadID, "turnId": turnID})
		f.notify("item/agentMessage/delta", map[string]any{"threadId": threadID, "turnId": turnID, "itemId": "a-" + turnID, "delta": "echo: "})
		f.notify("item/agentMessage/delta", map[string]any{"threadId": threadID, "turnId": turnID, "itemId": "a-" + turnID, "delta": text})
		f.notify("item/completed", map[string]any{"item": agentItem(reply), "threadId": threadID, "turnId": turnID})
		items = append(items, agentItem(reply))
	}
	f.mu.Lock()
	delete(f.active, turnID)
	if t, ok := f.threads[threadID]; ok {
		t.Turns = append(t.Turns, fakeTurn{ID: turnID, Status: status, Items: items})
		f.saveState()
	}
	f.mu.Unlock()
	f.notify("thread/status/changed", map[string]any{"threadId": threadID, "status": map[string]any{"type": "idle"}})
	f.notify("turn/completed", map[string]any{"threadId": threadID, "turn": map[string]any{"id": turnID, "items": items, "status": status, "error": nil}})
}

// askApprovals sends every kind of server request and logs the answers.
func (f *fakeServer) askApprovals(threadID, turnID string) {
	base := map[string]any{"threadId": threadID, "turnId": turnID, "itemId": "call_1", "startedAtMs": 0}
	with := func(extra map[string]any) map[string]any {
		m := map[string]any{}
		for k, v := range base {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	reqs := []struct {
		method string
		params any
	}{
		{"item/commandExecution/requestApproval", with(map[string]any{"kind": "command", "command": "rm -rf /tmp/x", "environmentId": nil})},
		{"item/fileChange/requestApproval", with(nil)},
		{"item/permissions/requestApproval", with(map[string]any{"environmentId": nil, "cwd": "/tmp", "reason": nil,
			"permissions": map[string]any{"network": map[string]any{"enabled": true}, "fileSystem": nil}})},
		{"item/tool/requestUserInput", with(map[string]any{"questions": []any{}, "isBlocking": true, "autoResolutionMs": nil})},
		{"mcpServer/elicitation/request", map[string]any{"threadId": threadID, "turnId": turnID, "serverName": "s", "mode": "url", "_meta": nil, "message": "m", "url": "http://x", "elicitationId": "e"}},
		{"execCommandApproval", map[string]any{"conversationId": threadID, "callId": "c", "approvalId": nil, "command": []string{"ls"}, "cwd": "/", "reason": nil, "parsedCmd": []any{}}},
		{"applyPatchApproval", map[string]any{"conversationId": threadID, "callId": "c", "fileChanges": map[string]any{}, "reason": nil, "grantRoot": nil}},
		{"item/tool/call", map[string]any{"threadId": threadID, "turnId": turnID, "callId": "c", "namespace": nil, "tool": "t", "arguments": nil}},
	}
	for _, r := range reqs {
		ans := f.request(r.method, r.params)
		f.logLine(map[string]any{"dir": "answer", "method": r.method, "answer": ans})
	}
}
