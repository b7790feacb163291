package codex_test

// Facts for issue 32 (Explore), measured on the real `codex app-server`
// (whichever binary CODEX_BIN names; 0.169.0 and 0.171.0 both pass) against
// codextest's model server: thread/inject_items and review/start. The
// runtime has no call for either yet, so the test speaks raw JSON-RPC over
// stdio through rawCodex below. docs/codex-explore-facts.md writes the
// findings out.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"tuttid/codex/codextest"
)

// exploreWait bounds every wait on Codex. This file depends on no other
// test file of the package, so the runtime's refactors leave it alone.
const exploreWait = 30 * time.Second

// exploreLog passes Codex's stderr to the test log.
type exploreLog struct{ t *testing.T }

func (w exploreLog) Write(p []byte) (int, error) {
	defer func() { _ = recover() }() // a line after the test ended
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// rawMsg is one JSON-RPC line from the app-server: a reply (ID, Result or
// Error), a notification (Method, Params) or a server request (both).
type rawMsg struct {
	ID     *json.RawMessage `json:"id"`
	Method string           `json:"method"`
	Params json.RawMessage  `json:"params"`
	Result json.RawMessage  `json:"result"`
	Error  *rawRPCError     `json:"error"`
}

type rawRPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rawRPCError) Error() string { return fmt.Sprintf("rpc error %d: %s", e.Code, e.Message) }

// rawCodex is a minimal app-server client for tests: every line read is kept
// in order, so a test can look for a notification after the call that caused
// it.
type rawCodex struct {
	t     *testing.T
	cmd   *exec.Cmd
	stdin io.WriteCloser

	mu      sync.Mutex
	msgs    []rawMsg
	changed chan struct{} // closed and replaced on every line
	nextID  int
	done    chan struct{} // closed when stdout ends
}

// startRawCodex runs `codex app-server` with CODEX_HOME=home and performs
// the handshake with the experimentalApi capability (as tuttid does).
func startRawCodex(t *testing.T, home string) *rawCodex {
	t.Helper()
	cmd := exec.Command(codextest.Binary(t), "app-server")
	cmd.Env = append(os.Environ(), "CODEX_HOME="+home)
	// Own process group: the npm wrapper spawns the real binary, and the
	// cleanup must kill both.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = exploreLog{t}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &rawCodex{t: t, cmd: cmd, stdin: stdin, changed: make(chan struct{}), done: make(chan struct{})}
	go c.read(stdout)
	t.Cleanup(c.stop)
	c.call("initialize", map[string]any{
		"clientInfo":   map[string]any{"name": "tuttid-explore-test", "version": "test"},
		"capabilities": map[string]any{"experimentalApi": true},
	}, nil)
	c.notify("initialized", nil)
	return c
}

// stop closes stdin (the app-server exits on EOF) and kills the group if it
// lingers.
func (c *rawCodex) stop() {
	c.stdin.Close()
	select {
	case <-c.done:
	case <-time.After(5 * time.Second):
	}
	_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	_ = c.cmd.Wait()
}

func (c *rawCodex) read(r io.Reader) {
	defer close(c.done)
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		line, err := br.ReadBytes('\n')
		if len(strings.TrimSpace(string(line))) > 0 {
			var m rawMsg
			if json.Unmarshal(line, &m) == nil {
				c.mu.Lock()
				c.msgs = append(c.msgs, m)
				close(c.changed)
				c.changed = make(chan struct{})
				c.mu.Unlock()
			}
		}
		if err != nil {
			return
		}
	}
}

func (c *rawCodex) write(v any) {
	c.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.stdin.Write(append(b, '\n')); err != nil {
		c.t.Fatalf("write to codex: %v", err)
	}
}

func (c *rawCodex) notify(method string, params any) {
	c.t.Helper()
	c.write(map[string]any{"method": method, "params": params})
}

// mark is a position in the message log: waitNote looks only after it.
func (c *rawCodex) mark() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.msgs)
}

// waitFor returns the first message at or after from that matches, waiting
// up to exploreWait.
func (c *rawCodex) waitFor(what string, from int, match func(rawMsg) bool) (rawMsg, int) {
	c.t.Helper()
	deadline := time.NewTimer(exploreWait)
	defer deadline.Stop()
	for i := from; ; {
		c.mu.Lock()
		for ; i < len(c.msgs); i++ {
			if match(c.msgs[i]) {
				m := c.msgs[i]
				c.mu.Unlock()
				return m, i
			}
		}
		ch := c.changed
		c.mu.Unlock()
		select {
		case <-ch:
		case <-c.done:
			c.t.Fatalf("codex exited while waiting for %s", what)
		case <-deadline.C:
			c.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// tryCall sends a request and returns its reply's error (nil on success);
// out, when set, receives the result.
func (c *rawCodex) tryCall(method string, params, out any) error {
	c.t.Helper()
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	c.mu.Unlock()
	from := c.mark()
	c.write(map[string]any{"id": id, "method": method, "params": params})
	want := fmt.Sprint(id)
	m, _ := c.waitFor("reply to "+method, from, func(m rawMsg) bool {
		return m.ID != nil && m.Method == "" && string(*m.ID) == want
	})
	if m.Error != nil {
		return m.Error
	}
	if out != nil {
		if err := json.Unmarshal(m.Result, out); err != nil {
			c.t.Fatalf("%s result %s: %v", method, m.Result, err)
		}
	}
	return nil
}

func (c *rawCodex) call(method string, params, out any) {
	c.t.Helper()
	if err := c.tryCall(method, params, out); err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
}

// notesSince returns the notifications from position from on.
func (c *rawCodex) notesSince(from int) []rawMsg {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []rawMsg
	for _, m := range c.msgs[from:] {
		if m.ID == nil && m.Method != "" {
			out = append(out, m)
		}
	}
	return out
}

// rawItem is the part of a ThreadItem the test reads.
type rawItem struct {
	Type    string `json:"type"`
	ID      string `json:"id"`
	Text    string `json:"text"`
	Review  string `json:"review"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

type rawTurn struct {
	ID     string    `json:"id"`
	Status string    `json:"status"`
	Items  []rawItem `json:"items"`
}

// startThread starts a thread in cwd (read-only, never asks).
func (c *rawCodex) startThread(cwd string) string {
	c.t.Helper()
	var res struct {
		Thread struct {
			ID string `json:"id"`
		} `json:"thread"`
	}
	c.call("thread/start", map[string]any{"cwd": cwd, "approvalPolicy": "never", "sandbox": "read-only"}, &res)
	if res.Thread.ID == "" {
		c.t.Fatal("thread/start: no thread id")
	}
	return res.Thread.ID
}

// turn runs one user turn to its end and returns turn/completed's turn.
func (c *rawCodex) turn(thread, text string) rawTurn {
	c.t.Helper()
	var res struct {
		Turn rawTurn `json:"turn"`
	}
	from := c.mark()
	c.call("turn/start", map[string]any{
		"threadId": thread,
		"input":    []any{map[string]any{"type": "text", "text": text}},
	}, &res)
	return c.waitTurnCompleted(from, res.Turn.ID)
}

func (c *rawCodex) waitTurnCompleted(from int, turnID string) rawTurn {
	c.t.Helper()
	m, _ := c.waitFor("turn/completed of "+turnID, from, func(m rawMsg) bool {
		return m.Method == "turn/completed" && strings.Contains(string(m.Params), turnID)
	})
	var p struct {
		Turn rawTurn `json:"turn"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil {
		c.t.Fatal(err)
	}
	return p.Turn
}

// turnsList reads the whole thread with thread/turns/list (oldest first).
func (c *rawCodex) turnsList(thread string) []rawTurn {
	c.t.Helper()
	var res struct {
		Data []rawTurn `json:"data"`
	}
	c.call("thread/turns/list", map[string]any{"threadId": thread, "limit": 100, "sortDirection": "asc"}, &res)
	return res.Data
}

func itemTypes(turns []rawTurn) []string {
	var out []string
	for _, t := range turns {
		for _, it := range t.Items {
			out = append(out, it.Type)
		}
	}
	return out
}

// inputTexts lists the model request's input items as "role:text" (message
// items) or their type, without Codex's own developer and context items:
// what the conversation itself contributes.
func inputTexts(t *testing.T, r codextest.Request) []string {
	t.Helper()
	var b struct {
		Input []struct {
			Type    string          `json:"type"`
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"input"`
	}
	if err := json.Unmarshal(r.Body, &b); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, it := range b.Input {
		if it.Type != "message" {
			out = append(out, it.Type)
			continue
		}
		var parts []struct {
			Text string `json:"text"`
		}
		_ = json.Unmarshal(it.Content, &parts)
		var texts []string
		for _, p := range parts {
			texts = append(texts, p.Text)
		}
		text := strings.Join(texts, "\n")
		if it.Role == "developer" && !strings.HasPrefix(text, "EXPLORE-") || it.Role == "user" && codextest.IsInjectedContext(text) {
			continue
		}
		out = append(out, it.Role+":"+text)
	}
	return out
}

func requestModel(t *testing.T, r codextest.Request) string {
	t.Helper()
	var b struct {
		Model string `json:"model"`
	}
	if err := json.Unmarshal(r.Body, &b); err != nil {
		t.Fatal(err)
	}
	return b.Model
}

// The items a summary of a branch would be, in the three roles the
// Responses API knows.
var exploreInjected = []any{
	map[string]any{"type": "message", "role": "user", "content": []any{
		map[string]any{"type": "input_text", "text": "EXPLORE-USER branch b1 did X"},
	}},
	map[string]any{"type": "message", "role": "assistant", "content": []any{
		map[string]any{"type": "output_text", "text": "EXPLORE-ASSISTANT noted"},
	}},
	map[string]any{"type": "message", "role": "developer", "content": []any{
		map[string]any{"type": "input_text", "text": "EXPLORE-DEVELOPER summary of b1"},
	}},
}

func TestExploreInjectItems(t *testing.T) {
	model := codextest.StartModelServer(t)
	home := codextest.NewCodexHome(t, model.URL())
	c := startRawCodex(t, home)
	cwd := t.TempDir()
	thread := c.startThread(cwd)
	first := c.turn(thread, "first question")

	// The reply is an empty object; no notification says anything was added.
	from := c.mark()
	var res map[string]any
	c.call("thread/inject_items", map[string]any{"threadId": thread, "items": exploreInjected}, &res)
	if len(res) != 0 {
		t.Fatalf("inject_items result = %v, want {}", res)
	}
	for _, n := range c.notesSince(from) {
		t.Logf("after inject_items: %s %s", n.Method, n.Params)
		if strings.HasPrefix(n.Method, "item/") || strings.HasPrefix(n.Method, "turn/") {
			t.Errorf("inject_items sent %s", n.Method)
		}
	}

	// The next model request of the thread carries the items in order,
	// between the first turn and the new user message, the developer one too.
	second := c.turn(thread, "second question")
	reqs := model.RequestsFor(thread)
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	got := inputTexts(t, reqs[1])
	want := []string{
		"user:first question", "assistant:reply: first question",
		"user:EXPLORE-USER branch b1 did X", "assistant:EXPLORE-ASSISTANT noted", "developer:EXPLORE-DEVELOPER summary of b1",
		"user:second question",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("second request input = %q\nwant %q", got, want)
	}

	// Neither thread/read nor thread/turns/list shows them: they are in the
	// model's history only (the rollout's response items), not in a turn.
	turns := c.turnsList(thread)
	if len(turns) != 2 {
		t.Fatalf("turns/list: %d turns, want 2", len(turns))
	}
	if got := itemTypes(turns); !slices.Equal(got, []string{"userMessage", "agentMessage", "userMessage", "agentMessage"}) {
		t.Fatalf("turns/list items = %v", got)
	}
	var read struct {
		Thread struct {
			Turns []rawTurn `json:"turns"`
		} `json:"thread"`
	}
	c.call("thread/read", map[string]any{"threadId": thread, "includeTurns": true}, &read)
	if got := itemTypes(read.Thread.Turns); !slices.Equal(got, []string{"userMessage", "agentMessage", "userMessage", "agentMessage"}) {
		t.Fatalf("thread/read items = %v", got)
	}
	for _, tr := range read.Thread.Turns {
		for _, it := range tr.Items {
			if strings.Contains(it.Text, "EXPLORE-") {
				t.Fatalf("thread/read shows an injected item: %+v", it)
			}
		}
	}

	// A fork takes the injected items with it when they lie before the fork
	// point: the whole conversation and through the second turn carry them;
	// through the first turn (they came after it) does not.
	for _, tc := range []struct {
		name, lastTurnID string
		want             []string
	}{
		{"whole", "", []string{"user:first question", "assistant:reply: first question",
			"user:EXPLORE-USER branch b1 did X", "assistant:EXPLORE-ASSISTANT noted", "developer:EXPLORE-DEVELOPER summary of b1",
			"user:second question", "assistant:reply: second question", "user:in the fork"}},
		{"through turn 2", second.ID, []string{"user:first question", "assistant:reply: first question",
			"user:EXPLORE-USER branch b1 did X", "assistant:EXPLORE-ASSISTANT noted", "developer:EXPLORE-DEVELOPER summary of b1",
			"user:second question", "assistant:reply: second question", "user:in the fork"}},
		{"through turn 1", first.ID, []string{"user:first question", "assistant:reply: first question", "user:in the fork"}},
	} {
		params := map[string]any{"threadId": thread, "cwd": cwd, "excludeTurns": true}
		if tc.lastTurnID != "" {
			params["lastTurnId"] = tc.lastTurnID
		}
		var fork struct {
			Thread struct {
				ID string `json:"id"`
			} `json:"thread"`
		}
		c.call("thread/fork", params, &fork)
		c.turn(fork.Thread.ID, "in the fork")
		creqs := model.RequestsFor(fork.Thread.ID)
		if len(creqs) != 1 {
			t.Fatalf("fork %s: %d requests", tc.name, len(creqs))
		}
		if got := inputTexts(t, creqs[0]); !slices.Equal(got, tc.want) {
			t.Errorf("fork %s: input %q\nwant %q", tc.name, got, tc.want)
		}
	}

	// Bad input: an unknown thread, and an item that is not a Responses item.
	err := c.tryCall("thread/inject_items", map[string]any{"threadId": "00000000-0000-0000-0000-000000000000", "items": exploreInjected}, nil)
	t.Logf("unknown thread: %v", err)
	var rpcErr *rawRPCError
	if !errors.As(err, &rpcErr) {
		t.Fatalf("inject into an unknown thread: %v, want an error", err)
	}
	err = c.tryCall("thread/inject_items", map[string]any{"threadId": thread, "items": []any{map[string]any{"type": "nonsense"}}}, nil)
	// Codex does not validate the items: an unknown type is accepted (and
	// left out of the model's input, checked below).
	if err != nil {
		t.Fatalf("inject an unknown item type: %v, want it accepted", err)
	}

	// A stored thread that this app-server has not loaded is refused; after
	// thread/resume the call works and the items reach the next request.
	c.stop()
	c2 := startRawCodex(t, home)
	err = c2.tryCall("thread/inject_items", map[string]any{"threadId": thread, "items": exploreInjected[:1]}, nil)
	t.Logf("not loaded: %v", err)
	if !errors.As(err, &rpcErr) {
		t.Fatalf("inject into an unloaded thread: %v, want an error", err)
	}
	c2.call("thread/resume", map[string]any{"threadId": thread}, nil)
	// The same items twice are kept twice: Codex does not deduplicate.
	again := []any{map[string]any{"type": "message", "role": "user", "content": []any{
		map[string]any{"type": "input_text", "text": "EXPLORE-USER after resume"},
	}}}
	c2.call("thread/inject_items", map[string]any{"threadId": thread, "items": again}, nil)
	c2.call("thread/inject_items", map[string]any{"threadId": thread, "items": again}, nil)
	c2.turn(thread, "third question")
	reqs = model.RequestsFor(thread)
	got = inputTexts(t, reqs[len(reqs)-1])
	t.Logf("request after resume: %q", got)
	if slices.Contains(got, "nonsense") {
		t.Fatalf("the unknown item reached the model: %q", got)
	}
	if n := len(got); n < 4 || got[n-3] != "user:EXPLORE-USER after resume" || got[n-2] != "user:EXPLORE-USER after resume" || got[n-1] != "user:third question" || !slices.Contains(got, "developer:EXPLORE-DEVELOPER summary of b1") {
		t.Fatalf("request after resume = %q", got)
	}
}

// Injected while a turn runs, the items act like input sent to that turn
// (as turn/steer does): after the reply in flight, Codex sends one more
// model request IN THE SAME TURN, ending with the injected items, and the
// model answers them. Explore refuses to tell a WORKING parent for that
// reason (the summary would cost a model call and a reply in the person's
// turn).
func TestExploreInjectDuringTurn(t *testing.T) {
	model := codextest.StartModelServer(t)
	home := codextest.NewCodexHome(t, model.URL())
	model.SetReply(func(r codextest.Request) codextest.Reply {
		if r.LastUserText() == "slow" {
			return codextest.Reply{Text: "slow reply", Delay: 2 * time.Second}
		}
		return codextest.DefaultReply(r)
	})
	c := startRawCodex(t, home)
	thread := c.startThread(t.TempDir())
	from := c.mark()
	var res struct {
		Turn rawTurn `json:"turn"`
	}
	c.call("turn/start", map[string]any{
		"threadId": thread, "input": []any{map[string]any{"type": "text", "text": "slow"}},
	}, &res)
	ctx, cancel := context.WithTimeout(context.Background(), exploreWait)
	defer cancel()
	if _, err := model.WaitRequests(ctx, 1); err != nil {
		t.Fatal(err)
	}
	c.call("thread/inject_items", map[string]any{"threadId": thread, "items": exploreInjected[:1]}, nil)
	done := c.waitTurnCompleted(from, res.Turn.ID)
	if done.Status != "completed" {
		t.Fatalf("turn = %+v", done)
	}
	c.turn(thread, "next")
	reqs := model.RequestsFor(thread)
	var got [][]string
	for _, r := range reqs {
		got = append(got, inputTexts(t, r))
	}
	want := [][]string{
		{"user:slow"},
		{"user:slow", "assistant:slow reply", "user:EXPLORE-USER branch b1 did X"},
		{"user:slow", "assistant:slow reply", "user:EXPLORE-USER branch b1 did X", "assistant:reply: EXPLORE-USER branch b1 did X", "user:next"},
	}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("requests = %q\nwant %q", got, want)
	}
	// The second request belongs to the first turn: its turn id is in
	// the turn metadata header.
	if md := reqs[1].Header.Get("X-Codex-Turn-Metadata"); !strings.Contains(md, res.Turn.ID) {
		t.Fatalf("request 2 turn metadata %s, want turn %s", md, res.Turn.ID)
	}
}

// gitRepo makes a repository with one commit and one uncommitted change.
func gitRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(dir, "calc.go"), []byte("package calc\n\nfunc Add(a, b int) int { return a + b }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run("add", ".")
	run("commit", "-q", "-m", "calc")
	if err := os.WriteFile(filepath.Join(dir, "calc.go"), []byte("package calc\n\nfunc Add(a, b int) int { return a - b }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// reviewJSON is the reply the review model must give: Codex parses the
// assistant text as its ReviewOutputEvent.
func reviewJSON(dir string) string {
	b, _ := json.Marshal(map[string]any{
		"findings": []any{map[string]any{
			"title":            "[P1] Add subtracts",
			"body":             "Add returns a - b instead of a + b.",
			"confidence_score": 0.9,
			"priority":         1,
			"code_location": map[string]any{
				"absolute_file_path": filepath.Join(dir, "calc.go"),
				"line_range":         map[string]any{"start": 3, "end": 3},
			},
		}},
		"overall_correctness":      "patch is incorrect",
		"overall_explanation":      "EXPLORE-REVIEW the change breaks Add.",
		"overall_confidence_score": 0.8,
	})
	return string(b)
}

func TestExploreReviewStart(t *testing.T) {
	model := codextest.StartModelServer(t)
	home := codextest.NewCodexHome(t, model.URL())
	dir := gitRepo(t)
	model.SetReply(func(r codextest.Request) codextest.Reply {
		// The review runs on a thread of its own whose user text is
		// Codex's review prompt; it does not carry the diff (the model is
		// expected to run git itself).
		if strings.HasPrefix(r.LastUserText(), "Review the current code changes") {
			return codextest.Reply{Text: reviewJSON(dir)}
		}
		return codextest.DefaultReply(r)
	})
	c := startRawCodex(t, home)
	thread := c.startThread(dir)
	c.turn(thread, "first question")

	from := c.mark()
	var res struct {
		ReviewThreadID string  `json:"reviewThreadId"`
		Turn           rawTurn `json:"turn"`
	}
	c.call("review/start", map[string]any{"threadId": thread, "target": map[string]any{"type": "uncommittedChanges"}}, &res)
	if res.ReviewThreadID != thread || res.Turn.ID == "" || res.Turn.Status != "inProgress" {
		t.Fatalf("review/start = %+v, want the same thread and a turn in progress", res)
	}
	done := c.waitTurnCompleted(from, res.Turn.ID)
	var methods []string
	var entered, exited rawItem
	for _, n := range c.notesSince(from) {
		methods = append(methods, n.Method)
		if n.Method == "warning" || n.Method == "item/started" {
			t.Logf("%s %.400s", n.Method, n.Params)
		}
		if n.Method != "item/completed" {
			continue
		}
		var p struct {
			Item rawItem `json:"item"`
		}
		_ = json.Unmarshal(n.Params, &p)
		switch p.Item.Type {
		case "enteredReviewMode":
			entered = p.Item
		case "exitedReviewMode":
			exited = p.Item
		}
	}
	t.Logf("review notifications: %v", methods)
	t.Logf("entered: %q", entered.Review)
	t.Logf("exited: %q", exited.Review)
	if done.Status != "completed" {
		t.Fatalf("review turn = %+v", done)
	}
	if entered.Review == "" || !strings.Contains(exited.Review, "Add subtracts") || !strings.Contains(exited.Review, "EXPLORE-REVIEW") {
		t.Fatalf("entered %+v exited %+v", entered, exited)
	}

	// The review runs as a sub-agent on a thread of its own (its own
	// Thread-Id, header x-openai-subagent in client_metadata), with the
	// thread's model, Codex's review guidelines as the developer item and a
	// fixed prompt as the user item: no diff, no parent conversation.
	reqs := model.Requests()
	last := reqs[len(reqs)-1]
	if last.ThreadID() == thread || requestModel(t, last) != "mock-model" {
		t.Fatalf("review request: thread %s model %s", last.ThreadID(), requestModel(t, last))
	}
	if !strings.Contains(string(last.Body), `"x-openai-subagent":"review"`) || !strings.Contains(string(last.Body), "# Review guidelines") {
		t.Fatalf("review request lacks the sub-agent mark or the guidelines")
	}
	if got := last.UserTexts(); !slices.Equal(got, []string{"Review the current code changes (staged, unstaged, and untracked files) and provide prioritized findings."}) {
		t.Fatalf("review request user texts = %q", got)
	}

	// Read back, the review turn is one agentMessage holding the formatted
	// review: the entered/exited items and the prompt are live only.
	turns := c.turnsList(thread)
	rt := turns[len(turns)-1]
	if rt.ID != res.Turn.ID || len(rt.Items) != 1 || rt.Items[0].Type != "agentMessage" || rt.Items[0].Text != exited.Review {
		t.Fatalf("review turn in turns/list: %+v", rt)
	}

	// The parent thread's next request carries the review's outcome as a
	// <user_action> user item and the formatted review as an assistant item.
	c.turn(thread, "after review")
	preqs := model.RequestsFor(thread)
	after := inputTexts(t, preqs[len(preqs)-1])
	t.Logf("after review: %q", after)
	var action bool
	for _, s := range after {
		if strings.HasPrefix(s, "user:<user_action>") && strings.Contains(s, "Add subtracts") {
			action = true
		}
	}
	if !action || !slices.Contains(after, "assistant:"+exited.Review) {
		t.Fatalf("parent's next request = %q", after)
	}

	// A reply that is not the JSON shape becomes the review text as is; the
	// commit and custom targets name themselves in enteredReviewMode.
	model.SetReply(func(r codextest.Request) codextest.Reply {
		if strings.Contains(string(r.Body), `"x-openai-subagent":"review"`) {
			return codextest.Reply{Text: "EXPLORE-PLAIN looks fine"}
		}
		return codextest.DefaultReply(r)
	})
	head := strings.TrimSpace(gitOut(t, dir, "rev-parse", "HEAD"))
	for _, target := range []map[string]any{
		{"type": "commit", "sha": head, "title": "calc"},
		{"type": "baseBranch", "branch": "main"},
		{"type": "custom", "instructions": "EXPLORE-CUSTOM check Add"},
	} {
		from := c.mark()
		var res struct {
			Turn rawTurn `json:"turn"`
		}
		c.call("review/start", map[string]any{"threadId": thread, "target": target}, &res)
		c.waitTurnCompleted(from, res.Turn.ID)
		var entered, exited string
		for _, n := range c.notesSince(from) {
			var p struct {
				Item rawItem `json:"item"`
			}
			if n.Method == "item/completed" && json.Unmarshal(n.Params, &p) == nil {
				switch p.Item.Type {
				case "enteredReviewMode":
					entered = p.Item.Review
				case "exitedReviewMode":
					exited = p.Item.Review
				}
			}
		}
		reqs := model.Requests()
		t.Logf("target %v: entered %q exited %q prompt %.300q", target["type"], entered, exited, reqs[len(reqs)-1].LastUserText())
		if entered == "" || exited != "EXPLORE-PLAIN looks fine" {
			t.Fatalf("target %v: entered %q exited %q", target, entered, exited)
		}
	}
	if got := model.Requests()[len(model.Requests())-1].LastUserText(); got != "EXPLORE-CUSTOM check Add" {
		t.Fatalf("custom review prompt = %q", got)
	}

	// Bad target and a thread that is not loaded are refused.
	var rpcErr *rawRPCError
	err := c.tryCall("review/start", map[string]any{"threadId": thread, "target": map[string]any{"type": "nonsense"}}, nil)
	t.Logf("bad target: %v", err)
	if !errors.As(err, &rpcErr) {
		t.Fatalf("bad target: %v", err)
	}
	err = c.tryCall("review/start", map[string]any{"threadId": "00000000-0000-0000-0000-000000000000", "target": map[string]any{"type": "uncommittedChanges"}}, nil)
	t.Logf("unknown thread: %v", err)
	if !errors.As(err, &rpcErr) {
		t.Fatalf("unknown thread: %v", err)
	}
}

// review_model in config.toml names the reviewer's model: its requests
// carry it, so a test (or a person) can give reviews a model of their own,
// and the model server can answer them by name.
func TestExploreReviewModel(t *testing.T) {
	model := codextest.StartModelServer(t)
	// A top-level key: before Config's first table.
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte("review_model = \"mock-review\"\n"+codextest.Config(model.URL())), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := gitRepo(t)
	model.SetModelReply("mock-review", func(codextest.Request) codextest.Reply {
		return codextest.Reply{Text: reviewJSON(dir)}
	})
	c := startRawCodex(t, home)
	thread := c.startThread(dir)
	from := c.mark()
	var res struct {
		Turn rawTurn `json:"turn"`
	}
	c.call("review/start", map[string]any{"threadId": thread, "target": map[string]any{"type": "uncommittedChanges"}}, &res)
	c.waitTurnCompleted(from, res.Turn.ID)
	reqs := model.ModelRequests("mock-review")
	if len(reqs) != 1 || len(model.Requests()) != 1 {
		t.Fatalf("review requests by model: %d of %d", len(reqs), len(model.Requests()))
	}
	var exited string
	for _, n := range c.notesSince(from) {
		var p struct {
			Item rawItem `json:"item"`
		}
		if n.Method == "item/completed" && json.Unmarshal(n.Params, &p) == nil && p.Item.Type == "exitedReviewMode" {
			exited = p.Item.Review
		}
	}
	if !strings.Contains(exited, "[P1] Add subtracts") {
		t.Fatalf("exitedReviewMode = %q", exited)
	}
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}
