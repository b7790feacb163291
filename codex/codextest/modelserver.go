// Package codextest runs the real `codex app-server` offline in tests: a
// fake OpenAI Responses server (ModelServer), a CODEX_HOME that points Codex
// at it (WriteCodexHome, NewCodexHome) and the location of the codex binary
// (Binary, FindBinary). It imports no other tuttid package.
//
// What Codex 0.169.0 sends and needs, observed on this machine beyond
// /work/shared/codex-app-server.md:
//
//   - The only model call is POST /v1/responses. No GET /v1/models came in
//     any run; the server still answers it (an empty catalogue) in case a
//     feature asks. The 5 SSE events of the shared notes are all Codex needs.
//   - Request headers: Accept: text/event-stream, Originator and the
//     User-Agent prefix are the initialize clientInfo.name, and
//     Session-Id, Thread-Id and X-Client-Request-Id all carry the thread id,
//     plus X-Codex-Turn-Metadata
//     (JSON: turn_id, sandbox_mode, analytics_enabled, ...), X-Codex-Window-Id
//     and X-Codex-Beta-Features. No Authorization header without env_key.
//   - Body keys: model, stream, input, tools (exec_command, write_stdin,
//     request_user_input, view_image, ...), tool_choice "auto",
//     parallel_tool_calls, reasoning {summary:auto}, store false, include,
//     prompt_cache_key (= thread id), client_metadata. There is no
//     "instructions" key: the base prompt is the first developer item.
//   - input, first turn: developer item (base instructions, ~17 KB),
//     developer item (<skills_instructions>, ...), then a user-role item whose
//     only text is "<environment_context>\n  <cwd>...</cwd><shell>...
//     </environment_context>", then the user's own item(s). Later turns append
//     the assistant output_text item and the next user item. Codex marks its
//     own user-role items by a leading tag (see IsInjectedContext); UserTexts
//     drops them.
//   - After turn/interrupt Codex drops the HTTP stream at once. The
//     interrupted turn's partial assistant text is NOT kept in history; the
//     next request has the user item, then a user-role item
//     "<turn_aborted>\nThe user interrupted the previous turn on purpose. ...
//     </turn_aborted>", then the next user item. A failed turn's user text
//     stays in history too.
//   - A declined exec_command approval comes back to the model, in a second
//     request of the same turn, as a function_call_output whose output reads
//     "exec_command failed: CreateProcess { ... rejected by user ... }".
//   - HTTP 500, 400 and 429 each end the turn at once as "failed" (one
//     request, no retry with request_max_retries = 0), preceded by an "error"
//     notification with willRetry false. A 500's message is replaced by a
//     generic "high demand" text; a 400 carries the body through.
//   - With default config Codex runs `git ls-remote
//     https://github.com/openai/plugins.git` and resolves api.github.com and
//     chatgpt.com (plugin sync), and runs `bash -lc` on the user's
//     ~/.bashrc for a shell snapshot. features.plugins = false and
//     features.shell_snapshot = false stop all of it (checked with strace: no
//     DNS query left). Unknown config keys produce a configWarning naming them.
//   - Harmless noise: a configWarning about bubblewrap missing on PATH, a
//     warning "Model metadata for `mock-model` not found" per turn, and a
//     stderr warning that PATH aliases are not created when CODEX_HOME is
//     under /tmp.
//   - Timing on the 2-core machine: initialize answers after ~0.9 s, a turn
//     completes ~0.3-0.5 s after turn/start; the app-server exits promptly
//     when its stdin closes.
package codextest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// Request is one POST /v1/responses call as Codex sent it.
type Request struct {
	// Seq numbers the model requests from 1 in arrival order.
	Seq int
	// Header is the request's HTTP header.
	Header http.Header
	// Body is the raw JSON body.
	Body []byte

	items    []inputItem
	model    string
	parseErr error
}

// inputItem is the subset of a Responses input item the fake reads.
type inputItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Output    json.RawMessage `json:"output"`
}

// contentPart is one element of a message item's content array.
type contentPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// ParseRequest builds a Request from a raw /v1/responses body. The server
// uses it; it is exported so tests can feed recorded bodies through the same
// parsing.
func ParseRequest(body []byte) Request {
	r := Request{Body: body, Header: http.Header{}}
	var b struct {
		Model string      `json:"model"`
		Input []inputItem `json:"input"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		r.parseErr = err
		return r
	}
	r.items = b.Input
	r.model = b.Model
	return r
}

// Err reports whether the body failed to parse as JSON.
func (r Request) Err() error { return r.parseErr }

// ThreadID is the Codex thread the request belongs to (Codex sends it in the
// Thread-Id and Session-Id headers).
func (r Request) ThreadID() string {
	if id := r.Header.Get("Thread-Id"); id != "" {
		return id
	}
	return r.Header.Get("Session-Id")
}

// UserTexts returns the text of every user-role message item in input, in
// order, without the items Codex injects itself (environment context, AGENTS.md
// instructions, turn-aborted markers...; see IsInjectedContext). The text parts
// of one item are joined with "\n".
func (r Request) UserTexts() []string {
	var out []string
	for _, it := range r.items {
		if it.Role != "user" || (it.Type != "" && it.Type != "message") {
			continue
		}
		var texts []string
		for _, p := range parseContent(it.Content) {
			if p.Type != "" && p.Type != "input_text" && p.Type != "text" {
				continue
			}
			if IsInjectedContext(p.Text) {
				continue
			}
			texts = append(texts, p.Text)
		}
		if len(texts) > 0 {
			out = append(out, strings.Join(texts, "\n"))
		}
	}
	return out
}

// LastUserText is the last element of UserTexts, or "".
func (r Request) LastUserText() string {
	t := r.UserTexts()
	if len(t) == 0 {
		return ""
	}
	return t[len(t)-1]
}

// AssistantTexts returns the output_text of every assistant message item in
// input, in order: the replies Codex kept in the thread's history.
func (r Request) AssistantTexts() []string {
	var out []string
	for _, it := range r.items {
		if it.Role != "assistant" || (it.Type != "" && it.Type != "message") {
			continue
		}
		var texts []string
		for _, p := range parseContent(it.Content) {
			texts = append(texts, p.Text)
		}
		out = append(out, strings.Join(texts, ""))
	}
	return out
}

// FunctionCallOutput is a tool result Codex sends back to the model.
type FunctionCallOutput struct {
	CallID string
	Output string
}

// FunctionCallOutputs returns the function_call_output items in input, in
// order. A reply func uses it to tell the follow-up request after a tool call
// (which carries the tool's output) from a fresh turn.
func (r Request) FunctionCallOutputs() []FunctionCallOutput {
	var out []FunctionCallOutput
	for _, it := range r.items {
		if it.Type != "function_call_output" {
			continue
		}
		out = append(out, FunctionCallOutput{CallID: it.CallID, Output: outputText(it.Output)})
	}
	return out
}

// AfterToolCall reports whether the request follows a tool call of the same
// turn: its last input item is a function_call_output.
func (r Request) AfterToolCall() bool {
	return len(r.items) > 0 && r.items[len(r.items)-1].Type == "function_call_output"
}

// HasFunctionCallOutputFor reports whether input answers the given call id.
func (r Request) HasFunctionCallOutputFor(callID string) bool {
	for _, o := range r.FunctionCallOutputs() {
		if o.CallID == callID {
			return true
		}
	}
	return false
}

// parseContent accepts both content shapes of the Responses API: a plain
// string or an array of typed parts.
func parseContent(raw json.RawMessage) []contentPart {
	if len(raw) == 0 {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []contentPart{{Type: "input_text", Text: s}}
	}
	var parts []contentPart
	if json.Unmarshal(raw, &parts) != nil {
		return nil
	}
	return parts
}

// outputText flattens a function_call_output's output, a string or a list of
// content parts.
func outputText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var b strings.Builder
	for _, p := range parseContent(raw) {
		b.WriteString(p.Text)
	}
	if b.Len() == 0 {
		return string(raw)
	}
	return b.String()
}

// injectedPrefixes open the user-role items Codex writes itself. Taken from the
// 0.169.0 binary's strings; the environment context item was observed.
var injectedPrefixes = []string{
	"<environment_context>",
	"# AGENTS.md instructions",
	"<INSTRUCTIONS>",
	"<user_instructions>",
	"<skill>",
	"<user_shell_command>",
	"<turn_aborted>",
	"<subagent_notification>",
	"<collaboration_mode>",
	"<model_switch>",
	"<personality_spec>",
	"<permissions instructions>",
	"<apps_instructions>",
	"<skills_instructions>",
	"<plugins_instructions>",
	"<realtime_conversation>",
	"<rollout_budget>",
}

// IsInjectedContext reports whether a user-role text is one Codex adds on its
// own (it starts with one of Codex's context tags) rather than user input. A
// user who types such a tag as the first thing in a message is misread; tests
// do not.
func IsInjectedContext(text string) bool {
	t := strings.TrimLeft(text, " \t\r\n")
	for _, p := range injectedPrefixes {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

// Reply scripts the model's answer to one request.
type Reply struct {
	// Text is the assistant message, streamed in several deltas (see Chunks).
	// With no Text, no Chunks and a FunctionCall, no message is sent.
	Text string
	// Chunks, when set, are the exact deltas; Text is then ignored. Otherwise
	// Text is cut into up to DefaultChunks pieces, or by ChunkBytes.
	Chunks []string
	// ChunkBytes, when set, cuts Text into deltas of at most this many bytes
	// (whole runes), the way a model streams a long reply: a 5 MB Text with
	// ChunkBytes 4096 is about 1,300 deltas.
	ChunkBytes int
	// Delay holds the stream open after the first delta (or after
	// response.created when there is no text), so a test can watch a working
	// turn and interrupt it. It ends early when the client disconnects or the
	// server closes.
	Delay time.Duration
	// ChunkEvery paces the deltas: a pause after each one, the way a model
	// streams over time.
	ChunkEvery time.Duration
	// OnDelta, when set, is called with each delta's text just before it
	// is written to Codex (a benchmark times its way to a subscriber).
	OnDelta func(text string)
	// Status, when not 0 or 200, answers with this HTTP status and a JSON
	// error body instead of a stream: the turn fails.
	Status int
	// ErrorMessage is the error body's message (default "mock model error").
	ErrorMessage string
	// FunctionCall, when set, makes the model call a tool after the message.
	FunctionCall *FunctionCall
	// Drop cuts the stream after response.created, before
	// response.completed: Codex counts a disconnected stream and retries
	// it with an "error" notification (willRetry true, "Reconnecting...
	// n/5"), at once, where a 500 is first retried silently.
	Drop bool
	// Usage, when set, is the token usage response.completed reports
	// (default: 10 input, 2 output, 12 total).
	Usage *Usage
}

// Usage is the usage object of response.completed.
type Usage struct {
	InputTokens, CachedTokens, OutputTokens, ReasoningTokens, TotalTokens int
}

// FunctionCall is a Responses function_call item the model emits. Codex runs
// exec_command (asking for approval under approvalPolicy "untrusted") and
// sends the result back in a new request of the same turn, whose
// LastUserText is unchanged: answer that one with text (check
// HasFunctionCallOutputFor), or the turn calls the tool forever.
type FunctionCall struct {
	// Name defaults to "exec_command".
	Name string
	// Cmd is the shell command, used when Arguments is empty.
	Cmd string
	// Arguments is the raw JSON argument string; default {"cmd": Cmd}.
	Arguments string
	// CallID defaults to "call_<Seq>". Codex uses it as the approval's itemId.
	CallID string
	// SandboxPermissions and Justification go into exec_command's
	// arguments when set (with Cmd). "require_escalated" plus a
	// justification is how the model asks to leave the sandbox: under
	// approvalPolicy "on-request" Codex then asks the client.
	SandboxPermissions string
	Justification      string
}

// MaxYieldMs is how long exec_command waits for a command to end before
// answering the model with its output so far (Codex clamps yield_time_ms
// to 250..30000 ms; its default is 10000).
const MaxYieldMs = 30_000

// EscalatedCommand is an exec_command call that asks to run cmd outside
// the sandbox, with a justification: in workspace-write / on-request Codex
// sends item/commandExecution/requestApproval for it (verified on 0.169.0).
func EscalatedCommand(cmd, justification string) *FunctionCall {
	return &FunctionCall{Cmd: cmd, SandboxPermissions: "require_escalated", Justification: justification}
}

// PatchCommand is an exec_command call running apply_patch that adds a
// file at path with the given lines. Codex intercepts it as a fileChange
// item; a path outside the writable roots makes it ask with
// item/fileChange/requestApproval (see StrictWorkspaceWrite).
func PatchCommand(path string, lines ...string) *FunctionCall {
	var b strings.Builder
	b.WriteString("apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: " + path + "\n")
	for _, l := range lines {
		b.WriteString("+" + l + "\n")
	}
	b.WriteString("*** End Patch\nEOF\n")
	return &FunctionCall{Cmd: b.String()}
}

// DefaultChunks is how many deltas a Reply's Text is cut into.
const DefaultChunks = 3

// DefaultReply answers "reply: " + the last user text.
func DefaultReply(r Request) Reply {
	return Reply{Text: "reply: " + r.LastUserText()}
}

// ModelServer is a fake OpenAI Responses API on 127.0.0.1 for Codex. It is
// safe for concurrent use.
type ModelServer struct {
	srv  *httptest.Server
	done chan struct{} // closed by Close; ends pending Delays

	mu        sync.Mutex
	reqs      []Request
	forgotten int      // requests dropped by ForgetRequests
	other     []string // method and path of non-model requests
	reply     func(Request) Reply
	byModel   map[string]func(Request) Reply // modelreply.go
	logf      func(format string, args ...any)
	tb        testing.TB    // when set, logs go to tb.Logf with this server as a helper
	arrived   chan struct{} // closed and replaced on every model request
	canceled  int           // streams cut short by the client going away
	closeOnce sync.Once
	auth      authState // auth.go
}

// NewModelServer starts a server; Close it when done. Usable from TestMain.
// It logs through log/slog at debug level until SetLogf is called.
func NewModelServer() *ModelServer {
	m := &ModelServer{
		done:    make(chan struct{}),
		arrived: make(chan struct{}),
		logf: func(format string, args ...any) {
			slog.Debug(fmt.Sprintf(format, args...), "component", "codextest.ModelServer")
		},
	}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serveHTTP))
	return m
}

// StartModelServer starts a server that logs to t and closes at cleanup.
func StartModelServer(t testing.TB) *ModelServer {
	t.Helper()
	m := NewModelServer()
	m.mu.Lock()
	m.tb = t
	m.mu.Unlock()
	// Close before the test ends: it waits for the handlers, so none logs to
	// a finished test.
	t.Cleanup(m.Close)
	return m
}

// URL is the base URL for a model provider, ending in /v1.
func (m *ModelServer) URL() string { return m.srv.URL + "/v1" }

// Close ends pending streams and shuts the server down. Safe to call twice.
func (m *ModelServer) Close() {
	m.closeOnce.Do(func() {
		close(m.done)
		m.srv.Close()
	})
}

// SetLogf routes the server's log lines (one per request) to f, e.g. t.Logf.
// nil silences it.
func (m *ModelServer) SetLogf(f func(format string, args ...any)) {
	if f == nil {
		f = func(string, ...any) {}
	}
	m.mu.Lock()
	m.logf = f
	m.tb = nil
	m.mu.Unlock()
}

// SetReply scripts the replies; nil restores DefaultReply. f runs on the
// server's goroutine for each request and must be safe for concurrent calls.
func (m *ModelServer) SetReply(f func(Request) Reply) {
	m.mu.Lock()
	m.reply = f
	m.mu.Unlock()
}

// Requests returns the model requests received so far, in arrival order.
func (m *ModelServer) Requests() []Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Request(nil), m.reqs...)
}

// ForgetRequests drops the recorded requests (each holds the whole
// conversation Codex sent): a long test calls it before it measures its
// memory. Seq keeps counting; WaitRequests counts from here.
func (m *ModelServer) ForgetRequests() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.forgotten += len(m.reqs)
	m.reqs = nil
}

// RequestsFor returns the model requests of one Codex thread, so tests that
// share a server can tell their requests apart.
func (m *ModelServer) RequestsFor(threadID string) []Request {
	var out []Request
	for _, r := range m.Requests() {
		if r.ThreadID() == threadID {
			out = append(out, r)
		}
	}
	return out
}

// OtherRequests lists "METHOD /path" of every request that was not a model
// call (answered with an empty model list or 404).
func (m *ModelServer) OtherRequests() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.other...)
}

// WaitRequests waits until at least n model requests have arrived (they are
// recorded on arrival, before the reply streams) and returns them all.
func (m *ModelServer) WaitRequests(ctx context.Context, n int) ([]Request, error) {
	for {
		m.mu.Lock()
		if len(m.reqs) >= n {
			out := append([]Request(nil), m.reqs...)
			m.mu.Unlock()
			return out, nil
		}
		ch := m.arrived
		got := len(m.reqs)
		m.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, fmt.Errorf("codextest: %d of %d model requests arrived: %w", got, n, ctx.Err())
		}
	}
}

func (m *ModelServer) log(format string, args ...any) {
	m.mu.Lock()
	f, tb := m.logf, m.tb
	m.mu.Unlock()
	if tb != nil {
		tb.Helper() // report the handler's line, not this one
		tb.Logf(format, args...)
		return
	}
	f(format, args...)
}

func (m *ModelServer) serveHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/responses":
		m.serveResponses(w, r)
	case r.Method == http.MethodGet && r.URL.Path == "/v1/responses":
		m.refuseWebSocket(w, r)
	case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, deviceAuthPath):
		m.serveDeviceAuth(w, r)
	case r.Method == http.MethodGet && r.URL.Path == "/v1/models":
		m.recordOther(r)
		// Both the OpenAI list shape and Codex's own {"models": [...]} shape,
		// empty, so either parser accepts it and falls back to defaults.
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"list","data":[{"id":"mock-model","object":"model","created":0,"owned_by":"codextest"}],"models":[]}`)
	default:
		m.recordOther(r)
		writeError(w, http.StatusNotFound, "codextest: no such endpoint "+r.Method+" "+r.URL.Path)
	}
}

func (m *ModelServer) recordOther(r *http.Request) {
	m.mu.Lock()
	m.other = append(m.other, r.Method+" "+r.URL.Path)
	m.mu.Unlock()
	m.log("codextest: model server: unexpected %s %s", r.Method, r.URL.Path)
}

func (m *ModelServer) serveResponses(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "codextest: read body: "+err.Error())
		return
	}
	req := ParseRequest(body)
	req.Header = r.Header.Clone()

	m.mu.Lock()
	req.Seq = m.forgotten + len(m.reqs) + 1
	m.reqs = append(m.reqs, req)
	close(m.arrived)
	m.arrived = make(chan struct{})
	replyFn := m.reply
	if f, ok := m.byModel[req.model]; ok {
		replyFn = f
	}
	m.mu.Unlock()

	if req.parseErr != nil {
		m.log("codextest: model request %d: bad JSON: %v", req.Seq, req.parseErr)
		writeError(w, http.StatusBadRequest, "codextest: bad JSON: "+req.parseErr.Error())
		return
	}
	if status, msg, ok := m.refusal(req); ok {
		m.log("codextest: model request %d thread=%s -> HTTP %d (%s)", req.Seq, req.ThreadID(), status, msg)
		writeError(w, status, msg)
		return
	}
	if replyFn == nil {
		replyFn = DefaultReply
	}
	reply := replyFn(req)
	m.log("codextest: model request %d thread=%s model=%s user=%q -> %s", req.Seq, req.ThreadID(), req.model, req.LastUserText(), describeReply(reply))

	if reply.Status != 0 && reply.Status != http.StatusOK {
		msg := reply.ErrorMessage
		if msg == "" {
			msg = "mock model error"
		}
		writeError(w, reply.Status, msg)
		return
	}

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	m.rateLimitHeaders(w.Header())
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	events, pauseAfter := replyEvents(req.Seq, reply)
	if reply.Drop {
		events, pauseAfter = events[:1], -1
	}
	for i, ev := range events {
		if ev.Name == "response.output_text.delta" && reply.OnDelta != nil {
			reply.OnDelta(ev.Data["delta"].(string))
		}
		if _, err := w.Write(ev.encode()); err != nil {
			m.noteCanceled(req.Seq, err)
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
		if ev.Name == "response.output_text.delta" && reply.ChunkEvery > 0 && !m.pause(r.Context(), reply.ChunkEvery) {
			return
		}
		if i == pauseAfter && reply.Delay > 0 {
			t := time.NewTimer(reply.Delay)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				m.noteCanceled(req.Seq, r.Context().Err())
				return
			case <-m.done:
				t.Stop()
				return
			}
		}
	}
}

// pause waits d, or less when the client leaves or the server closes
// (then false).
func (m *ModelServer) pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-m.done:
		return false
	}
}

func (m *ModelServer) noteCanceled(seq int, err error) {
	m.mu.Lock()
	m.canceled++
	m.mu.Unlock()
	m.log("codextest: model request %d: client went away: %v", seq, err)
}

// canceledStreams counts streams the client cut short (for the package tests).
func (m *ModelServer) canceledStreams() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.canceled
}

func describeReply(r Reply) string {
	var parts []string
	if r.Status != 0 && r.Status != http.StatusOK {
		parts = append(parts, fmt.Sprintf("HTTP %d", r.Status))
	} else {
		parts = append(parts, fmt.Sprintf("text=%q", logText(strings.Join(replyChunks(r), ""))))
	}
	if r.FunctionCall != nil {
		parts = append(parts, "call="+r.FunctionCall.name())
	}
	if r.Delay > 0 {
		parts = append(parts, "delay="+r.Delay.String())
	}
	if r.Drop {
		parts = append(parts, "dropped")
	}
	return strings.Join(parts, " ")
}

// logText keeps a log line short: a long reply is shown by its head and
// its size.
func logText(s string) string {
	const n = 200
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return fmt.Sprintf("%s… (%d bytes)", s[:i], len(s))
}

// writeError answers in the OpenAI error shape, which Codex shows for 4xx.
func writeError(w http.ResponseWriter, status int, msg string) {
	typ := "invalid_request_error"
	if status >= 500 {
		typ = "server_error"
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": msg, "type": typ, "param": nil, "code": "codextest_error",
	}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// sseEvent is one server-sent event: its name and its JSON data, whose "type"
// repeats the name as OpenAI does.
type sseEvent struct {
	Name string
	Data map[string]any
}

func (e sseEvent) encode() []byte {
	data, _ := json.Marshal(e.Data) // only maps, strings and numbers: cannot fail
	var b bytes.Buffer
	fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", e.Name, data)
	return b.Bytes()
}

func (f *FunctionCall) name() string {
	if f.Name == "" {
		return "exec_command"
	}
	return f.Name
}

func (f *FunctionCall) arguments() string {
	if f.Arguments != "" {
		return f.Arguments
	}
	// The longest wait Codex allows (its MAX_YIELD_TIME_MS) for the
	// command's end before it answers "Process running": at the default
	// 10 s a command starved by a loaded machine (the agent's work runs at
	// --agent-nice) ended after its tool call, and the test's file was
	// never written.
	args := map[string]any{"cmd": f.Cmd, "yield_time_ms": MaxYieldMs}
	if f.SandboxPermissions != "" {
		args["sandbox_permissions"] = f.SandboxPermissions
	}
	if f.Justification != "" {
		args["justification"] = f.Justification
	}
	b, _ := json.Marshal(args)
	return string(b)
}

// replyChunks is the list of deltas for r's message (nil: no text).
func replyChunks(r Reply) []string {
	if len(r.Chunks) > 0 {
		return r.Chunks
	}
	if r.ChunkBytes > 0 {
		return splitBytes(r.Text, r.ChunkBytes)
	}
	return splitChunks(r.Text, DefaultChunks)
}

// splitBytes cuts s into pieces of at most n bytes, never inside a rune
// (a rune longer than n is a piece of its own). The pieces concatenate to s.
func splitBytes(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		end := min(n, len(s))
		for end < len(s) && end > 0 && !utf8.RuneStart(s[end]) {
			end--
		}
		if end == 0 {
			_, end = utf8.DecodeRuneInString(s)
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}

// splitChunks cuts s into at most n pieces of about equal rune count, so the
// client sees several deltas. The pieces concatenate to s.
func splitChunks(s string, n int) []string {
	runes := []rune(s)
	if len(runes) == 0 {
		return nil
	}
	if n > len(runes) {
		n = len(runes)
	}
	size := (len(runes) + n - 1) / n
	var out []string
	for i := 0; i < len(runes); i += size {
		out = append(out, string(runes[i:min(i+size, len(runes))]))
	}
	return out
}

// replyEvents builds the SSE sequence for one request and the index of the
// event after which Reply.Delay applies.
func replyEvents(seq int, r Reply) (events []sseEvent, pauseAfter int) {
	respID := fmt.Sprintf("resp_%d", seq)
	ev := func(name string, data map[string]any) {
		data["type"] = name
		events = append(events, sseEvent{Name: name, Data: data})
	}
	ev("response.created", map[string]any{"response": map[string]any{"id": respID}})
	pauseAfter = 0

	chunks := replyChunks(r)
	outputIndex := 0
	if len(chunks) > 0 || r.FunctionCall == nil {
		msgID := fmt.Sprintf("msg_%d", seq)
		ev("response.output_item.added", map[string]any{
			"output_index": outputIndex,
			"item": map[string]any{
				"type": "message", "id": msgID, "role": "assistant",
				"status": "in_progress", "content": []any{},
			},
		})
		for i, c := range chunks {
			ev("response.output_text.delta", map[string]any{
				"item_id": msgID, "output_index": outputIndex, "content_index": 0, "delta": c,
			})
			if i == 0 {
				pauseAfter = len(events) - 1
			}
		}
		ev("response.output_item.done", map[string]any{
			"output_index": outputIndex,
			"item": map[string]any{
				"type": "message", "id": msgID, "role": "assistant", "status": "completed",
				"content": []any{map[string]any{
					"type": "output_text", "text": strings.Join(chunks, ""), "annotations": []any{},
				}},
			},
		})
		outputIndex++
	}
	if fc := r.FunctionCall; fc != nil {
		callID := fc.CallID
		if callID == "" {
			callID = fmt.Sprintf("call_%d", seq)
		}
		item := func(status, args string) map[string]any {
			return map[string]any{
				"type": "function_call", "id": fmt.Sprintf("fc_%d", seq), "call_id": callID,
				"name": fc.name(), "arguments": args, "status": status,
			}
		}
		ev("response.output_item.added", map[string]any{"output_index": outputIndex, "item": item("in_progress", "")})
		ev("response.output_item.done", map[string]any{"output_index": outputIndex, "item": item("completed", fc.arguments())})
	}
	// Token counts stay small and constant: real ones would only risk
	// triggering Codex's auto-compaction in long tests.
	u := Usage{InputTokens: 10, OutputTokens: 2, TotalTokens: 12}
	if r.Usage != nil {
		u = *r.Usage
	}
	ev("response.completed", map[string]any{"response": map[string]any{
		"id": respID,
		"usage": map[string]any{
			"input_tokens": u.InputTokens, "input_tokens_details": map[string]any{"cached_tokens": u.CachedTokens},
			"output_tokens": u.OutputTokens, "output_tokens_details": map[string]any{"reasoning_tokens": u.ReasoningTokens},
			"total_tokens": u.TotalTokens,
		},
	}})
	return events, pauseAfter
}
