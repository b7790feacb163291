package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tuttid/agent/agenttest"

	"github.com/coder/websocket"
)

// The attacks of issue 9, tried on a whole running tuttid: a page of another
// site after DNS rebinding, a local process without the token, a client
// without the token on the WebSocket, a path outside the workspace, and
// oversized bodies.

// rawDo sends a request without the harness's token unless the caller set
// one, and returns the status and body.
func rawDo(t *testing.T, req *http.Request) (int, http.Header, []byte) {
	t.Helper()
	resp, err := rawClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, body
}

func restCode(body []byte) string {
	var e struct {
		Error struct{ Code, Message string }
	}
	_ = json.Unmarshal(body, &e)
	return e.Error.Code
}

func graphQLCode(body []byte) string {
	var e struct{ Errors []gqlError }
	if json.Unmarshal(body, &e) != nil || len(e.Errors) != 1 {
		return ""
	}
	return e.Errors[0].Code()
}

// TestDNSRebindingRefused: the request of issue 9 (Host and Origin both
// evil.example) is refused with 403 forbidden_host for a read, a mutation,
// the GUI, /healthz and a WebSocket upgrade, even with the right token; the
// mutation changes nothing.
func TestDNSRebindingRefused(t *testing.T) {
	h := startServer(t, harnessOpts{runtime: agenttest.Idle()})
	port := h.url[strings.LastIndex(h.url, ":")+1:]
	evilHost := "evil.example:" + port
	evilOrigin := "http://" + evilHost
	mutation := `{"query":"mutation{createWorkspace(input:{name:\"pwn\",rootPath:\"/tmp\"}){id}}"}`
	read := `{"query":"{ workspaces { id name rootPath } }"}`
	for _, tc := range []struct {
		name, method, path, body string
		withToken                bool
	}{
		{"read", "POST", "/query", read, false},
		{"mutation", "POST", "/query", mutation, false},
		{"mutation with the token", "POST", "/query", mutation, true},
		{"GET query", "GET", "/query?query=" + url.QueryEscape("{ workspaces { id } }"), "", true},
		{"REST fork", "POST", forkPath("w", "s"), `{"requestId":"r"}`, true},
		{"GUI", "GET", "/app/", "", false},
		{"GUI with the token", "GET", "/app/?token=" + h.token, "", false},
		{"GraphiQL", "GET", "/", "", false},
		{"healthz", "GET", "/healthz", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, h.url+tc.path, strings.NewReader(tc.body))
			req.Host = evilHost
			req.Header.Set("Origin", evilOrigin)
			req.Header.Set("Content-Type", "application/json")
			if tc.withToken {
				req.Header.Set("Authorization", "Bearer "+h.token)
			}
			status, hdr, body := rawDo(t, req)
			if status != http.StatusForbidden || restCode(body) != "forbidden_host" {
				t.Errorf("got %d %s, want 403 forbidden_host", status, body)
			}
			if hdr.Get("Set-Cookie") != "" {
				t.Errorf("a refused request set a cookie: %s", hdr.Get("Set-Cookie"))
			}
		})
	}
	t.Run("WebSocket upgrade", func(t *testing.T) {
		for _, proto := range wsProtocols {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			header := http.Header{"Origin": {evilOrigin}}
			c, resp, err := websocket.Dial(ctx, h.wsURL(), &websocket.DialOptions{
				HTTPClient: rawClient, Host: evilHost, HTTPHeader: header, Subprotocols: []string{proto}})
			cancel()
			if err == nil {
				c.CloseNow()
				t.Fatalf("%s: upgrade accepted", proto)
			}
			if resp == nil || resp.StatusCode != http.StatusForbidden {
				t.Errorf("%s: refused with %v (response %v), want 403", proto, err, resp)
			}
		}
	})
	var out struct{ Workspaces []struct{ Name string } }
	h.must(`{ workspaces { name } }`, nil, &out)
	if len(out.Workspaces) != 0 {
		t.Errorf("the rebinding mutation created %+v", out.Workspaces)
	}
	// The same requests for this machine's names pass (with the token).
	for _, host := range []string{"localhost:" + port, "127.0.0.1:" + port, "[::1]:" + port} {
		req, _ := http.NewRequest("POST", h.url+"/query", strings.NewReader(read))
		req.Host = host
		req.Header.Set("Origin", "http://"+host)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+h.token)
		if status, _, body := rawDo(t, req); status != 200 || graphQLCode(body) != "" {
			t.Errorf("Host %s: got %d %s", host, status, body)
		}
	}
}

// TestTokenRequired: every API request without the token, or with a wrong
// one, is refused with 401 unauthenticated (in GraphQL's shape on /query,
// REST's on /v1) and reads or changes nothing; /healthz needs no token and
// tells only statuses.
func TestTokenRequired(t *testing.T) {
	h := startServer(t, harnessOpts{runtime: agenttest.Idle()})
	ws := h.createWorkspace("secret-workspace")
	id := h.seedSession(ws, "codex", "thread-1")
	mutation := `{"query":"mutation{createWorkspace(input:{name:\"pwn\",rootPath:\"/tmp\"}){id}}"}`
	read := `{"query":"{ workspaces { id name rootPath } }"}`
	auths := map[string]func(*http.Request){
		"no token":       func(*http.Request) {},
		"wrong token":    func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+strings.Repeat("x", 32)) },
		"token as Basic": func(r *http.Request) { r.Header.Set("Authorization", "Basic "+h.token) },
		"token prefix":   func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+h.token[:len(h.token)-1]) },
		// No cookie carries the token any more (issue 22, 13): not even the right one passes.
		"token as the old cookie": func(r *http.Request) { r.Header.Set("Cookie", "tuttid-token-"+port(h)+"="+h.token) },
		"token as a cookie":       func(r *http.Request) { r.Header.Set("Cookie", "tuttid-token="+h.token) },
		"token in the query":      func(r *http.Request) { q := r.URL.Query(); q.Set("token", h.token); r.URL.RawQuery = q.Encode() },
	}
	for name, setAuth := range auths {
		for _, tc := range []struct {
			name, method, path, body string
			graphQL                  bool
		}{
			{"GraphQL read", "POST", "/query", read, true},
			{"GraphQL mutation", "POST", "/query", mutation, true},
			{"GraphQL GET", "GET", "/query?query=" + url.QueryEscape("{ workspaces { id } }"), "", true},
			{"REST fork", "POST", forkPath(ws, id), `{"requestId":"r1"}`, false},
			{"OpenAPI", "GET", "/v1/openapi.json", "", false},
		} {
			t.Run(name+"/"+tc.name, func(t *testing.T) {
				req, _ := http.NewRequest(tc.method, h.url+tc.path, strings.NewReader(tc.body))
				req.Header.Set("Content-Type", "application/json")
				setAuth(req)
				status, _, body := rawDo(t, req)
				code := restCode(body)
				if tc.graphQL {
					code = graphQLCode(body)
				}
				if status != http.StatusUnauthorized || code != "unauthenticated" {
					t.Errorf("got %d %s, want 401 unauthenticated", status, body)
				}
				if bytes.Contains(body, []byte("secret-workspace")) || bytes.Contains(body, []byte(`"data"`)) {
					t.Errorf("the refusal carries data: %s", body)
				}
			})
		}
	}
	var out struct{ Workspaces []struct{ Name string } }
	h.must(`{ workspaces { name } }`, nil, &out)
	if len(out.Workspaces) != 1 {
		t.Errorf("workspaces after the refused mutations: %+v", out.Workspaces)
	}
	// The right token in the header passes.
	for name, setAuth := range map[string]func(*http.Request){
		"header": func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+h.token) },
	} {
		req, _ := http.NewRequest("POST", h.url+"/query", strings.NewReader(read))
		req.Header.Set("Content-Type", "application/json")
		setAuth(req)
		if status, _, body := rawDo(t, req); status != 200 || !bytes.Contains(body, []byte("secret-workspace")) {
			t.Errorf("%s: got %d %s", name, status, body)
		}
	}
	// /healthz: no token, no data beyond statuses.
	req, _ := http.NewRequest("GET", h.url+"/healthz", nil)
	status, _, body := rawDo(t, req)
	var health map[string]any
	if err := json.Unmarshal(body, &health); err != nil || status != 200 {
		t.Fatalf("healthz: %d %s", status, body)
	}
	for k := range health {
		if k != "status" && k != "database" && k != "codex" {
			t.Errorf("healthz tells %q: %s", k, body)
		}
	}
}

func port(h *harness) string { return h.url[strings.LastIndex(h.url, ":")+1:] }

// TestWebSocketTokenRequired: a WebSocket whose connection_init (and
// upgrade) lacks the token, or carries a wrong one, is closed with 4403
// and gets no data, not even for a subscription sent right after the
// init, and so is one whose upgrade carries the token only as a cookie;
// the token in connection_init or the upgrade's Authorization header pass.
func TestWebSocketTokenRequired(t *testing.T) {
	h := startServer(t, harnessOpts{runtime: agenttest.Idle()})
	ws := h.createWorkspace("demo")
	sub, _ := json.Marshal(map[string]any{"query": activityQuery, "variables": activityVars(ws, "", 0)})
	for name, payload := range map[string]string{
		"no payload":       ``,
		"empty payload":    `{}`,
		"wrong token":      `{"Authorization":"Bearer ` + strings.Repeat("x", 32) + `"}`,
		"token not Bearer": `{"Authorization":"` + h.token + `"}`,
		"other key":        `{"token":"` + h.token + `"}`,
	} {
		for _, proto := range wsProtocols {
			t.Run(name+"/"+proto, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				c, _, err := websocket.Dial(ctx, h.wsURL(), &websocket.DialOptions{HTTPClient: rawClient, Subprotocols: []string{proto}})
				if err != nil {
					t.Fatalf("upgrade: %v", err)
				}
				defer c.CloseNow()
				init := `{"type":"connection_init"}`
				if payload != "" {
					init = `{"type":"connection_init","payload":` + payload + `}`
				}
				subType := "subscribe"
				if proto == protoGraphQLWS {
					subType = "start"
				}
				_ = c.Write(ctx, websocket.MessageText, []byte(init))
				_ = c.Write(ctx, websocket.MessageText, []byte(`{"id":"1","type":"`+subType+`","payload":`+string(sub)+`}`))
				for {
					_, msg, err := c.Read(ctx)
					if err != nil {
						if got := websocket.CloseStatus(err); got != 4403 {
							t.Errorf("closed with %v (%d), want 4403", err, got)
						}
						return
					}
					var f wsFrame
					_ = json.Unmarshal(msg, &f)
					if f.Type != "connection_error" && f.Type != "ka" && f.Type != "ping" {
						t.Errorf("got %s before the close: %s", f.Type, msg)
					}
				}
			})
		}
	}
	t.Run("token in connection_init", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for _, proto := range wsProtocols {
			c, _, err := dialWSInit(ctx, h.wsURL(), proto, nil, map[string]any{"Authorization": "Bearer " + h.token})
			if err != nil {
				t.Fatalf("%s: %v", proto, err)
			}
			c.close()
		}
	})
	t.Run("token in the upgrade's header", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		header := http.Header{"Authorization": {"Bearer " + h.token}, "Origin": {h.url}}
		for _, proto := range wsProtocols {
			c, _, err := dialWSInit(ctx, h.wsURL(), proto, header, map[string]any{})
			if err != nil {
				t.Fatalf("%s: %v", proto, err)
			}
			c.close()
		}
	})
	// The token as a cookie on the upgrade, with an empty connection_init
	// (what a page of another port got from the browser, issue 22, 13):
	// closed with 4403.
	t.Run("cookie on the upgrade", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		header := http.Header{"Cookie": {"tuttid-token-" + port(h) + "=" + h.token}, "Origin": {h.url}}
		for _, proto := range wsProtocols {
			c, _, err := dialWSInit(ctx, h.wsURL(), proto, header, map[string]any{})
			if err == nil {
				c.close()
				t.Fatalf("%s: the cookie opened the socket", proto)
			}
			// graphql-ws clients get a connection_error frame before the close.
			if got := websocket.CloseStatus(err); got != 4403 && !strings.Contains(err.Error(), "connection_error") {
				t.Errorf("%s: %v (%d), want the close 4403", proto, err, got)
			}
		}
	})
}

// TestPageTokenFlow: GET /app/?token= and /?token= serve the page itself
// (it stores the token in its origin's storage and takes it out of the
// address), set no cookie, and are never cached; the page holds no data
// with or without a token. /app?token= goes on to /app/ with the token.
func TestPageTokenFlow(t *testing.T) {
	h := startServer(t, harnessOpts{runtime: agenttest.Idle()})
	h.createWorkspace("secret-workspace")
	noRedirect := &http.Client{Transport: baseTransport, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
	get := func(path string) (*http.Response, []byte) {
		resp, err := noRedirect.Get(h.url + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, body
	}
	for _, path := range []string{"/app/?token=" + h.token, "/?token=" + h.token, "/?x=1&token=" + h.token,
		"/app/", "/", "/app/?token=wrong-token-wrong-token"} {
		resp, body := get(path)
		if resp.StatusCode != http.StatusOK || len(resp.Cookies()) != 0 || resp.Header.Get("Set-Cookie") != "" {
			t.Errorf("GET %s: %d, cookies %v", path, resp.StatusCode, resp.Cookies())
		}
		if resp.Header.Get("Cache-Control") != "no-store" || resp.Header.Get("Referrer-Policy") != "same-origin" {
			t.Errorf("GET %s: Cache-Control %q, Referrer-Policy %q", path, resp.Header.Get("Cache-Control"), resp.Header.Get("Referrer-Policy"))
		}
		if bytes.Contains(body, []byte("secret-workspace")) || bytes.Contains(body, []byte(h.token)) {
			t.Errorf("GET %s: the page holds data or the token: %.300s", path, body)
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
			t.Errorf("GET %s: CSP %q", path, csp)
		}
	}
	resp, _ := get("/app?token=" + h.token)
	if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != "/app/?token="+h.token ||
		resp.Header.Get("Cache-Control") != "no-store" || len(resp.Cookies()) != 0 {
		t.Errorf("GET /app?token=: %d to %q, Cache-Control %q", resp.StatusCode, resp.Header.Get("Location"), resp.Header.Get("Cache-Control"))
	}
	// The GUI's own files hold no data and load without the token.
	if resp, _ := get("/app/app.css"); resp.StatusCode != http.StatusOK {
		t.Errorf("GET /app/app.css: %d", resp.StatusCode)
	}
}

// TestOtherPortOriginRefused: a page of another port of the same host (a
// dev server on localhost:3000) is another origin: with the right token
// even, its mutation and its WebSocket upgrade are refused with 403
// forbidden_origin, and change nothing; tuttid's own origin passes.
func TestOtherPortOriginRefused(t *testing.T) {
	h := startServer(t, harnessOpts{runtime: agenttest.Idle()})
	mutation := `{"query":"mutation{createWorkspace(input:{name:\"pwn\",rootPath:\"/tmp\"}){id}}"}`
	for _, host := range []string{"localhost:" + port(h), "127.0.0.1:" + port(h)} {
		for _, origin := range []string{"http://localhost:3000", "http://127.0.0.1:3000", "http://[::1]:" + port(h), "https://" + host} {
			req, _ := http.NewRequest("POST", h.url+"/query", strings.NewReader(mutation))
			req.Host = host
			req.Header.Set("Origin", origin)
			req.Header.Set("Content-Type", "text/plain") // a "simple" request: no preflight
			req.Header.Set("Authorization", "Bearer "+h.token)
			if status, _, body := rawDo(t, req); status != http.StatusForbidden || restCode(body) != "forbidden_origin" {
				t.Errorf("Host %s, Origin %s: mutation got %d %s, want 403 forbidden_origin", host, origin, status, body)
			}
			for _, proto := range wsProtocols {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				c, resp, err := websocket.Dial(ctx, h.wsURL(), &websocket.DialOptions{HTTPClient: rawClient, Host: host,
					HTTPHeader: http.Header{"Origin": {origin}, "Authorization": {"Bearer " + h.token}}, Subprotocols: []string{proto}})
				cancel()
				if err == nil {
					c.CloseNow()
					t.Fatalf("Host %s, Origin %s, %s: upgrade accepted", host, origin, proto)
				}
				if resp == nil || resp.StatusCode != http.StatusForbidden {
					t.Errorf("Host %s, Origin %s, %s: refused with %v, want 403", host, origin, proto, err)
				}
			}
		}
	}
	var out struct{ Workspaces []struct{ Name string } }
	h.must(`{ workspaces { name } }`, nil, &out)
	if len(out.Workspaces) != 0 {
		t.Errorf("a refused mutation created %+v", out.Workspaces)
	}
	// tuttid's own origin passes, by each name.
	for _, host := range []string{"localhost:" + port(h), "127.0.0.1:" + port(h)} {
		req, _ := http.NewRequest("POST", h.url+"/query", strings.NewReader(`{"query":"{ workspaces { id } }"}`))
		req.Host = host
		req.Header.Set("Origin", "http://"+host)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+h.token)
		if status, _, body := rawDo(t, req); status != 200 || graphQLCode(body) != "" {
			t.Errorf("own origin %s: %d %s", host, status, body)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c, _, err := dialWSInit(ctx, "ws://"+host+"/query", protoTransportWS, http.Header{"Origin": {"http://" + host}},
			map[string]any{"Authorization": "Bearer " + h.token})
		cancel()
		if err != nil {
			t.Errorf("own origin %s: WebSocket: %v", host, err)
		} else {
			c.close()
		}
	}
}

// TestPathsOutsideTheRootRefused: workspace roots must be existing
// directories (not /), and a session's cwd an existing directory inside
// the root after resolving symlinks; the refusals name the path.
func TestPathsOutsideTheRootRefused(t *testing.T) {
	h := startServer(t, harnessOpts{runtime: agenttest.Idle()})
	base := t.TempDir()
	root := filepath.Join(base, "project")
	for _, d := range []string{filepath.Join(root, "sub"), filepath.Join(base, "other")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(base, "other"), filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	for _, rootPath := range []string{"/", filepath.Join(base, "missing"), "relative/dir", filepath.Join(root, "sub", "..", "..", "..", "..", "..", "..", "..")} {
		errs := h.do(`mutation($in: CreateWorkspaceInput!) { createWorkspace(input: $in) { id } }`,
			map[string]any{"in": map[string]any{"name": "x", "rootPath": rootPath}}, nil)
		if len(errs) != 1 || errs[0].Code() != "invalid_input" || !strings.Contains(errs[0].Message, rootPath) {
			t.Errorf("rootPath %q: %+v", rootPath, errs)
		}
	}
	var ws struct{ CreateWorkspace struct{ ID, RootPath string } }
	h.must(`mutation($in: CreateWorkspaceInput!) { createWorkspace(input: $in) { id rootPath } }`,
		map[string]any{"in": map[string]any{"name": "p", "rootPath": filepath.Join(root, "sub", "..")}}, &ws)
	if ws.CreateWorkspace.RootPath != root {
		t.Errorf("stored rootPath %q, want %q", ws.CreateWorkspace.RootPath, root)
	}
	start := func(cwd string) []gqlError {
		return h.do(`mutation($in: StartSessionInput!) { startSession(input: $in) { id } }`,
			map[string]any{"in": map[string]any{"workspaceId": ws.CreateWorkspace.ID, "cwd": cwd}}, nil)
	}
	for _, cwd := range []string{"/etc", "..", "escape", filepath.Join(base, "other"), "missing", filepath.Join(root, "nope")} {
		if errs := start(cwd); len(errs) != 1 || errs[0].Code() != "invalid_input" || !strings.Contains(errs[0].Message, cwd) {
			t.Errorf("cwd %q: %+v", cwd, errs)
		}
	}
	// Inside the root the check passes; the idle runtime then refuses to run.
	for _, cwd := range []string{"sub", filepath.Join(root, "sub"), ""} {
		if errs := start(cwd); len(errs) != 1 || errs[0].Code() != "agent.runtime_unavailable" {
			t.Errorf("cwd %q: %+v, want to pass the check", cwd, errs)
		}
	}
}

// TestRequestTooLarge: a body over the limit is answered 413
// request_too_large, with or without a Content-Length.
func TestRequestTooLarge(t *testing.T) {
	h := startServer(t, harnessOpts{runtime: agenttest.Idle()})
	big := `{"query":"{ workspaces { id } }","variables":{"pad":"` + strings.Repeat("a", 1<<20) + `"}}`
	for _, tc := range []struct {
		name, path string
		chunked    bool
		graphQL    bool
	}{
		{"GraphQL", "/query", false, true},
		{"GraphQL chunked", "/query", true, true},
		{"REST", forkPath("w", "s"), false, false},
		{"REST chunked", forkPath("w", "s"), true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader = strings.NewReader(big)
			if tc.chunked {
				body = io.MultiReader(body) // hides the length: sent chunked
			}
			req, _ := http.NewRequest("POST", h.url+tc.path, body)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+h.token)
			status, _, raw := rawDo(t, req)
			code := restCode(raw)
			if tc.graphQL {
				code = graphQLCode(raw)
			}
			if status != http.StatusRequestEntityTooLarge || code != "request_too_large" {
				t.Errorf("got %d %.200s, want 413 request_too_large", status, raw)
			}
		})
	}
	// A message text over validate.MaxMessageLen is invalid_input.
	ws := h.createWorkspace("demo")
	id := h.seedSession(ws, "codex", "thread-1")
	errs := h.do(`mutation($in: SendMessageInput!) { sendMessage(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": id, "text": strings.Repeat("b", 256<<10+1)}}, nil)
	if len(errs) != 1 || errs[0].Code() != "invalid_input" {
		t.Errorf("long message: %+v", errs)
	}
}

// TestNoAuthOnLoopback: with --no-auth on a loopback listener, requests
// without a token pass and the pages need no cookie; the Host check stays.
func TestNoAuthOnLoopback(t *testing.T) {
	h := startServer(t, harnessOpts{runtime: agenttest.Idle(), noAuth: true})
	req, _ := http.NewRequest("POST", h.url+"/query", strings.NewReader(`{"query":"{ workspaces { id } }"}`))
	req.Header.Set("Content-Type", "application/json")
	if status, _, body := rawDo(t, req); status != 200 || graphQLCode(body) != "" {
		t.Errorf("query without a token: %d %s", status, body)
	}
	req, _ = http.NewRequest("GET", h.url+"/app/", nil)
	if status, _, body := rawDo(t, req); status != 200 || bytes.Contains(body, []byte("token-page")) {
		t.Errorf("GUI without a token: %d %.200s", status, body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := dialWSInit(ctx, h.wsURL(), protoTransportWS, nil, map[string]any{})
	if err != nil {
		t.Fatalf("WebSocket without a token: %v", err)
	}
	c.close()
	req, _ = http.NewRequest("GET", h.url+"/healthz", nil)
	req.Host = "evil.example"
	if status, _, body := rawDo(t, req); status != 403 || restCode(body) != "forbidden_host" {
		t.Errorf("foreign Host: %d %s", status, body)
	}
}
