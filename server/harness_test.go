package server_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"tuttid/store/storetest"

	"tuttid/agent"
	"tuttid/codex/codextest"
	"tuttid/server"
)

// harness is a whole tuttid on a free port, speaking to a real codex
// app-server that talks to a recording model server. It runs with a token
// of its own, which the test's clients carry without asking (see
// authTransport and dialWS).
type harness struct {
	t      testing.TB
	srv    *server.Server
	url    string
	token  string
	model  *codextest.ModelServer
	dbPath string
	// dataDir is the server's --data-dir (worktrees, kept indexes).
	dataDir string
	home    string
	stop    func()
}

type harnessOpts struct {
	runtime agent.Runtime // nil: the real codex app-server
	dbPath  string
	model   *codextest.ModelServer
	home    string
	// codexBin replaces the real binary (a missing one tests unavailability).
	codexBin string
	// noAuth runs without a token (--no-auth); h.token is then "".
	noAuth bool
	// bodyTimeout and idleTimeout replace the server's connection bounds.
	bodyTimeout, idleTimeout time.Duration
	// logTo, when set, gets the server's whole log (debug level too).
	logTo io.Writer
	// codexEnv is added to the real Codex's environment.
	codexEnv []string
	// maxTurns is server.Config.MaxConcurrentTurns.
	maxTurns int
	// agentNice is server.Config.AgentNice: 0 (tuttid's priority) in the
	// tests, whose Codex must not starve beside `go test`'s other
	// packages; --agent-nice's default where a test or benchmark is about
	// it.
	agentNice int
}

func startServer(t testing.TB, o harnessOpts) *harness {
	t.Helper()
	h := &harness{t: t, dbPath: o.dbPath, model: o.model, home: o.home}
	if h.dbPath == "" {
		// A SQLite file, or a fresh PostgreSQL database under
		// TUTTID_TEST_DB=postgres (make test-postgres).
		h.dbPath = storetest.Location(t)
	}
	// The data directory (worktrees, kept indexes) beside a SQLite file;
	// with PostgreSQL it would be the user's: the test's own instead.
	h.dataDir = filepath.Dir(h.dbPath)
	if strings.Contains(h.dbPath, "://") {
		h.dataDir = t.TempDir()
	}
	if !o.noAuth {
		h.token = newTestToken(t)
	}
	logger := testLogger(t)
	if o.logTo != nil {
		logger = slog.New(slog.NewTextHandler(io.MultiWriter(o.logTo, testWriter{t}), &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	cfg := server.Config{DBPath: h.dbPath, DataDir: h.dataDir, Runtime: o.runtime, Logger: logger, Token: h.token, NoAuth: o.noAuth,
		BodyTimeout: o.bodyTimeout, IdleTimeout: o.idleTimeout, MaxConcurrentTurns: o.maxTurns, AgentNice: o.agentNice}
	if o.runtime == nil {
		if h.model == nil {
			h.model = codextest.StartModelServer(t)
		}
		if h.home == "" {
			h.home = codextest.NewCodexHome(t, h.model.URL())
		}
		cfg.CodexBin = o.codexBin
		if cfg.CodexBin == "" {
			cfg.CodexBin = codextest.Binary(t)
		}
		cfg.CodexEnv = append(append(os.Environ(), "CODEX_HOME="+h.home), o.codexEnv...)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := server.New(ctx, cfg)
	if err != nil {
		cancel()
		t.Fatalf("server.New: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	h.srv, h.url = srv, "http://"+ln.Addr().String()
	if h.token != "" {
		registerToken(ln.Addr().String(), h.token)
	}
	stopped := false
	h.stop = func() {
		if stopped {
			return
		}
		stopped = true
		unregisterToken(ln.Addr().String())
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		if err := srv.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
	t.Cleanup(h.stop)
	return h
}

// tokens maps a running harness's host:port to its token.
var tokens sync.Map

func registerToken(hostport, token string) { tokens.Store(hostport, token) }
func unregisterToken(hostport string)      { tokens.Delete(hostport) }

// tokenFor is the token of the harness serving url (a URL or host:port), "" if none.
func tokenFor(url string) string {
	hostport := url
	if i := strings.Index(hostport, "://"); i >= 0 {
		hostport = hostport[i+3:]
	}
	if i := strings.IndexByte(hostport, '/'); i >= 0 {
		hostport = hostport[:i]
	}
	tok, _ := tokens.Load(hostport)
	s, _ := tok.(string)
	return s
}

func newTestToken(t testing.TB) string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// baseTransport is the transport without the token: rawClient's.
var baseTransport = http.DefaultTransport

// rawClient sends requests as given: the tests of authentication use it.
var rawClient = &http.Client{Transport: baseTransport}

// authTransport gives every request to a running harness that carries no
// Authorization header and no cookie the harness's token, so that tests
// (and their helpers) using http.Get, http.Post or http.DefaultClient speak
// to a server that requires it unchanged. WebSocket upgrades are left
// alone: dialWS sends the token in connection_init, as the contract says.
type authTransport struct{ base http.RoundTripper }

func (a authTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if tok := tokenFor(r.URL.Host); tok != "" && r.Header.Get("Authorization") == "" &&
		r.Header.Get("Cookie") == "" && r.Header.Get("Upgrade") == "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+tok)
	}
	return a.base.RoundTrip(r)
}

func init() { http.DefaultTransport = authTransport{base: baseTransport} }

func testLogger(t testing.TB) *slog.Logger {
	level := slog.LevelWarn
	if os.Getenv("TUTTID_TEST_LOG") != "" {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: level}))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}

// gqlError is one GraphQL error as a client sees it.
type gqlError struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path"`
	Extensions map[string]any `json:"extensions"`
}

func (e gqlError) Code() string { s, _ := e.Extensions["code"].(string); return s }

// do posts a GraphQL operation and decodes data into out; it returns the
// errors the server answered.
func (h *harness) do(query string, vars map[string]any, out any) []gqlError {
	h.t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	resp, err := http.Post(h.url+"/query", "application/json", bytes.NewReader(body))
	if err != nil {
		h.t.Fatalf("POST /query: %v", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var r struct {
		Data   json.RawMessage `json:"data"`
		Errors []gqlError      `json:"errors"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		h.t.Fatalf("decode %s: %v", raw, err)
	}
	if out != nil && len(r.Data) > 0 && string(r.Data) != "null" {
		if err := json.Unmarshal(r.Data, out); err != nil {
			h.t.Fatalf("decode data %s: %v", r.Data, err)
		}
	}
	return r.Errors
}

// must is do that fails the test on any error.
func (h *harness) must(query string, vars map[string]any, out any) {
	h.t.Helper()
	if errs := h.do(query, vars, out); len(errs) > 0 {
		h.t.Fatalf("graphql errors: %+v", errs)
	}
}

// eventually polls cond until it holds or the deadline passes.
func (h *harness) eventually(what string, timeout time.Duration, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (h *harness) createWorkspace(name string) string {
	h.t.Helper()
	return h.createWorkspaceAt(name, h.t.TempDir(), "")
}

// createWorkspaceAt makes a workspace on root (a repository for the code
// tests) with a worktreeSetup command ("" for none).
func (h *harness) createWorkspaceAt(name, root, setup string) string {
	h.t.Helper()
	in := map[string]any{"name": name, "rootPath": root}
	if setup != "" {
		in["worktreeSetup"] = setup
	}
	var out struct{ CreateWorkspace struct{ ID string } }
	h.must(`mutation($in: CreateWorkspaceInput!) { createWorkspace(input: $in) { id } }`, map[string]any{"in": in}, &out)
	return out.CreateWorkspace.ID
}

type sessionView struct {
	ID                string
	Title             string
	DisplayTitle      string
	Status            string
	ProviderSessionID string
	RuntimeContext    map[string]any
	Turns             []struct {
		ID       string
		Status   string
		Messages []struct{ ID, Role, Text string }
	}
}

const sessionFields = `id title displayTitle status providerSessionId runtimeContext
  turns { id status messages { id role text } }`

func (h *harness) startSession(ws, title string) sessionView {
	h.t.Helper()
	var out struct{ StartSession sessionView }
	h.must(`mutation($in: StartSessionInput!) { startSession(input: $in) { `+sessionFields+` } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "title": title}}, &out)
	return out.StartSession
}

func (h *harness) session(ws, id string) sessionView {
	h.t.Helper()
	var out struct{ Session *sessionView }
	h.must(`query($ws: ID!, $id: ID!) { session(workspaceId: $ws, id: $id) { `+sessionFields+` } }`,
		map[string]any{"ws": ws, "id": id}, &out)
	if out.Session == nil {
		h.t.Fatalf("session %s not found", id)
	}
	return *out.Session
}

// send starts a turn and waits until it completes; it returns the turn id.
func (h *harness) send(ws, id, text string) string {
	h.t.Helper()
	var out struct{ SendMessage struct{ ID, Status string } }
	h.must(`mutation($in: SendMessageInput!) { sendMessage(input: $in) { id status } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": id, "text": text}}, &out)
	turnID := out.SendMessage.ID
	h.waitTurn(ws, id, turnID, "COMPLETED")
	return turnID
}

func (h *harness) waitTurn(ws, id, turnID, status string) sessionView {
	h.t.Helper()
	var s sessionView
	h.eventually("turn "+turnID+" "+status, 30*time.Second, func() bool {
		s = h.session(ws, id)
		if s.Status == "WORKING" {
			return false
		}
		for _, t := range s.Turns {
			if t.ID == turnID && t.Status == status {
				return true
			}
		}
		return false
	})
	return s
}
