package server_test

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"tuttid/store/storetest"

	"tuttid/agent"
	"tuttid/agent/agenttest"
	"tuttid/ent/agentsession"
	"tuttid/session"
)

// seedSession stores a session row directly, for states a client cannot
// reach through the API (another provider, no thread, a lost thread).
func (h *harness) seedSession(ws, provider, thread string) string {
	h.t.Helper()
	// The cwd is the workspace's root: a fork checks it lies inside.
	w, err := h.srv.Store.Client.Workspace.Get(h.t.Context(), ws)
	if err != nil {
		h.t.Fatal(err)
	}
	a, err := h.srv.Store.Client.AgentSession.Create().
		SetID(session.NewID()).SetWorkspaceID(ws).SetProvider(provider).SetProviderSessionID(thread).
		SetTitle("seeded").SetStatus(agentsession.StatusREADY).SetCwd(w.RootPath).
		SetSettings(agent.ComposerSettings{}).Save(h.t.Context())
	if err != nil {
		h.t.Fatal(err)
	}
	return a.ID
}

// seedLostThread stores a session whose Codex thread does not exist but
// which, by its stored turn, had history: forking it must fail at Codex.
func (h *harness) seedLostThread(ws string) string {
	h.t.Helper()
	id := h.seedSession(ws, "codex", session.NewID())
	if err := h.srv.Store.Client.Turn.Create().SetTurnID("t1").SetAgentSessionID(id).SetStatus("COMPLETED").Exec(h.t.Context()); err != nil {
		h.t.Fatal(err)
	}
	return id
}

func forkPath(ws, id string) string {
	return "/v1/workspaces/" + ws + "/agent-sessions/" + id + "/fork"
}

func (h *harness) postError(path string, body any) (int, string) {
	h.t.Helper()
	status, raw := h.post(path, body)
	var e struct {
		Error struct{ Code, Message string }
	}
	if err := json.Unmarshal(raw, &e); err != nil || e.Error.Message == "" {
		h.t.Errorf("error body %s is not {error:{code,message}}", raw)
	}
	return status, e.Error.Code
}

// TestRESTForkErrorStatuses covers the statuses the design maps for
// failures that need the provider or the store to misbehave.
func TestRESTForkErrorStatuses(t *testing.T) {
	h := startServer(t, harnessOpts{})
	ws := h.createWorkspace("demo")

	t.Run("unsupported provider 422", func(t *testing.T) {
		id := h.seedSession(ws, "claude", session.NewID())
		if status, code := h.postError(forkPath(ws, id), map[string]any{"requestId": "u1"}); status != 422 || code != "agent.fork_unsupported_provider" {
			t.Errorf("got %d %s", status, code)
		}
	})
	t.Run("no provider thread 409", func(t *testing.T) {
		id := h.seedSession(ws, "codex", "")
		if status, code := h.postError(forkPath(ws, id), map[string]any{"requestId": "m1"}); status != 409 || code != "agent.fork_provider_session_missing" {
			t.Errorf("got %d %s", status, code)
		}
	})
	t.Run("provider fails 502", func(t *testing.T) {
		// A thread id Codex never saw: thread/fork answers an error.
		id := h.seedLostThread(ws)
		if status, code := h.postError(forkPath(ws, id), map[string]any{"requestId": "p1"}); status != 502 || code != "agent.fork_provider_failed" {
			t.Errorf("got %d %s", status, code)
		}
	})
	t.Run("storage fails after the provider 503", func(t *testing.T) {
		if storetest.OnPostgres() {
			t.Skip("the failure is injected with a SQLite trigger (make test-postgres)")
		}
		parent := h.startSession(ws, "Parent")
		h.send(ws, parent.ID, "hello")
		ctx := t.Context()
		if _, err := h.srv.Store.DB.ExecContext(ctx, `CREATE TRIGGER fail_lineage BEFORE INSERT ON workspace_agent_session_forks
		  BEGIN SELECT RAISE(ABORT, 'injected failure'); END`); err != nil {
			t.Fatal(err)
		}
		defer h.srv.Store.DB.ExecContext(ctx, `DROP TRIGGER fail_lineage`)
		before, _ := h.srv.Store.Client.AgentSession.Query().Count(ctx)
		status, code := h.postError(forkPath(ws, parent.ID), map[string]any{"requestId": "s1"})
		if status != 503 || code != "agent.fork_persistence_failed" {
			t.Errorf("got %d %s", status, code)
		}
		if after, _ := h.srv.Store.Client.AgentSession.Query().Count(ctx); after != before {
			t.Errorf("sessions %d -> %d: a child was stored without its lineage", before, after)
		}
	})
}

// TestRESTForkRuntimeUnavailable: with no Codex to run, a fork answers 503
// agent.runtime_unavailable, and so does starting a session over GraphQL.
func TestRESTForkRuntimeUnavailable(t *testing.T) {
	h := startServer(t, harnessOpts{codexBin: filepath.Join(t.TempDir(), "no-codex-here")})
	ws := h.createWorkspace("demo")
	id := h.seedSession(ws, "codex", session.NewID())
	if status, code := h.postError(forkPath(ws, id), map[string]any{"requestId": "r1"}); status != 503 || code != "agent.runtime_unavailable" {
		t.Errorf("fork: got %d %s", status, code)
	}
	errs := h.do(`mutation($in: StartSessionInput!) { startSession(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws}}, nil)
	if len(errs) != 1 || errs[0].Code() != "agent.runtime_unavailable" {
		t.Errorf("startSession: %+v", errs)
	}
	resp, err := http.Get(h.url + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var health struct{ Status, Database, Codex string }
	_ = json.NewDecoder(resp.Body).Decode(&health)
	if resp.StatusCode != 200 || health.Database != "ok" || health.Codex != "unavailable" {
		t.Errorf("healthz %d %+v", resp.StatusCode, health)
	}
}

// TestOpenAPIMatchesHandler checks the served document against what the
// handler really does: the route exists, a real response carries every
// required property, and every error status and code it can answer is
// documented.
func TestOpenAPIMatchesHandler(t *testing.T) {
	h := startServer(t, harnessOpts{})
	resp, err := http.Get(h.url + "/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Paths map[string]map[string]struct {
			Responses map[string]json.RawMessage
		}
		Components struct {
			Schemas map[string]struct {
				Required   []string
				Properties map[string]struct {
					Enum []string
				}
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	op, ok := doc.Paths["/v1/workspaces/{workspaceID}/agent-sessions/{agentSessionID}/fork"]["post"]
	if !ok {
		t.Fatal("the fork operation is not documented")
	}
	ws := h.createWorkspace("demo")
	parent := h.startSession(ws, "Doc")
	h.send(ws, parent.ID, "hello")
	status, raw := h.post(forkPath(ws, parent.ID), map[string]any{"requestId": "doc-1"})
	if _, ok := op.Responses[strconv.Itoa(status)]; !ok || status != 201 {
		t.Fatalf("fork answered %d (%s), documented: %v", status, raw, keys(op.Responses))
	}
	var body map[string]map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatal(err)
	}
	for part, schema := range map[string]string{"session": "WorkspaceAgentSession", "fork": "SessionFork"} {
		for _, field := range doc.Components.Schemas[schema].Required {
			if _, ok := body[part][field]; !ok {
				t.Errorf("response %s lacks required %s.%s", part, schema, field)
			}
		}
	}
	// Every error the endpoint produces must be documented with its status.
	documented := doc.Components.Schemas["Error"].Properties
	_ = documented
	var errSchema struct {
		Components struct {
			Schemas struct {
				Error struct {
					Properties struct {
						Error struct {
							Properties struct {
								Code struct{ Enum []string }
							}
						}
					}
				}
			}
		}
	}
	resp2, err := http.Get(h.url + "/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp2.Body.Close()
	if err := json.NewDecoder(resp2.Body).Decode(&errSchema); err != nil {
		t.Fatal(err)
	}
	codes := errSchema.Components.Schemas.Error.Properties.Error.Properties.Code.Enum
	probes := []struct {
		path string
		body any
	}{
		{forkPath(ws, parent.ID), map[string]any{}},
		{forkPath(ws, "missing"), map[string]any{"requestId": "doc-2"}},
		{forkPath(ws, parent.ID), map[string]any{"requestId": "doc-1", "title": "other"}},
		{forkPath(ws, parent.ID), map[string]any{"requestId": "doc-3", "lastTurnId": "nope"}},
		{forkPath(ws, h.seedSession(ws, "claude", "x")), map[string]any{"requestId": "doc-4"}},
		{forkPath(ws, h.seedLostThread(ws)), map[string]any{"requestId": "doc-5"}},
	}
	for _, p := range probes {
		status, code := h.postError(p.path, p.body)
		if _, ok := op.Responses[strconv.Itoa(status)]; !ok {
			t.Errorf("status %d (%s) is not documented", status, code)
		}
		if !slices.Contains(codes, code) {
			t.Errorf("code %s is not in the documented enum %v", code, codes)
		}
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestCrossSiteRequestsRefused: a page of another site, or of another
// port of this machine (another origin), cannot make a browser fork or
// mutate here (a "simple" text/plain POST needs no CORS preflight), while
// tuttid's own pages and non-browser clients can.
func TestCrossSiteRequestsRefused(t *testing.T) {
	h := startServer(t, harnessOpts{runtime: agenttest.Idle()})
	ws := h.createWorkspace("demo")
	id := h.seedSession(ws, "codex", "thread-1")
	send := func(path, contentType, origin, body string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, h.url+path, strings.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var e struct{ Error struct{ Code string } }
		_ = json.NewDecoder(resp.Body).Decode(&e)
		return resp.StatusCode, e.Error.Code
	}
	gql := `{"query":"mutation { createWorkspace(input: {name: \"x\", rootPath: \"/tmp\"}) { id } }"}`
	cases := []struct {
		name, path, contentType, origin, body string
		status                                int
		code                                  string
	}{
		{"fork from another site", forkPath(ws, id), "application/json", "https://evil.example", `{"requestId":"x1"}`, 403, "forbidden_origin"},
		{"simple text/plain fork", forkPath(ws, id), "text/plain", "", `{"requestId":"x2"}`, 415, "unsupported_media_type"},
		{"graphql mutation from another site", "/query", "application/json", "https://evil.example", gql, 403, "forbidden_origin"},
		{"graphql from a page of another local port", "/query", "application/json", "http://localhost:5173", gql, 403, "forbidden_origin"},
		{"graphql from tuttid's own page", "/query", "application/json", h.url, gql, 200, ""},
		{"graphql without an origin", "/query", "application/json", "", gql, 200, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if status, code := send(tc.path, tc.contentType, tc.origin, tc.body); status != tc.status || code != tc.code {
				t.Errorf("got %d %q, want %d %q", status, code, tc.status, tc.code)
			}
		})
	}
}
