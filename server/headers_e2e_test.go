package server_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"tuttid/agent/agenttest"
)

// TestAnswerHeaders: every answer of the API and of the pages, refusals
// included, carries Cache-Control: no-store and X-Content-Type-Options:
// nosniff; built files keep their own cache policy, and nosniff.
func TestAnswerHeaders(t *testing.T) {
	h := startServer(t, harnessOpts{runtime: agenttest.Idle()})
	read := `{"query":"{ workspaces { id } }"}`
	for _, tc := range []struct {
		name, method, path, body string
		token                    bool
		host                     string
		status                   int
	}{
		{"GraphQL answer", "POST", "/query", read, true, "", 200},
		{"GraphQL GET", "GET", "/query?query=" + url.QueryEscape("{ workspaces { id } }"), "", true, "", 200},
		{"GraphQL request error", "POST", "/query", `{"query":"{ nope }"}`, true, "", 200},
		{"GraphQL without the token", "POST", "/query", read, false, "", 401},
		{"GraphQL body not JSON", "POST", "/query", `{`, true, "", 400},
		{"REST", "GET", "/v1/openapi.json", "", true, "", 200},
		{"REST without the token", "GET", "/v1/openapi.json", "", false, "", 401},
		{"GUI page", "GET", "/app/", "", false, "", 0},
		{"GUI page with the token", "GET", "/app/?token=" + h.token, "", false, "", 0},
		{"GraphiQL page", "GET", "/", "", false, "", 0},
		{"healthz", "GET", "/healthz", "", false, "", 200},
		{"no such path", "GET", "/nope", "", true, "", 404},
		{"forbidden host", "GET", "/healthz", "", false, "evil.example", 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, h.url+tc.path, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			if tc.token {
				req.Header.Set("Authorization", "Bearer "+h.token)
			}
			if tc.host != "" {
				req.Host = tc.host
			}
			status, hdr, body := rawDo(t, req)
			if tc.status != 0 && status != tc.status {
				t.Errorf("status %d, want %d: %.200s", status, tc.status, body)
			}
			if got := hdr.Get("Cache-Control"); got != "no-store" {
				t.Errorf("Cache-Control %q, want no-store", got)
			}
			if got := hdr.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options %q, want nosniff", got)
			}
		})
	}
	// The GUI's built files are cached (their URLs carry a version).
	req, _ := http.NewRequest("GET", h.url+"/app/app.css", nil)
	status, hdr, _ := rawDo(t, req)
	if status != 200 || hdr.Get("Cache-Control") == "no-store" || hdr.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("app.css: %d, Cache-Control %q, nosniff %q", status, hdr.Get("Cache-Control"), hdr.Get("X-Content-Type-Options"))
	}
}
