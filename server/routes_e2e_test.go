package server_test

import (
	"bytes"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"tuttid/agent/agenttest"
)

// TestEveryRouteDeclaresItsAccess walks the route table a running tuttid
// registered: every route declares an access, and a request without the
// token gets what that access says (api: 401 unauthenticated; page: the
// page itself, which holds no data, never cached; public: an answer that
// is neither). Paths no route
// declares are refused with 404 not_found, with the token or without.
func TestEveryRouteDeclaresItsAccess(t *testing.T) {
	h := startServer(t, harnessOpts{runtime: agenttest.Idle()})
	routes := h.srv.Routes()
	seen := map[string]bool{}
	wildcard := regexp.MustCompile(`\{[^}]*\}`)
	for _, r := range routes {
		seen[r.Access] = true
		// A path of the route's own: wildcards filled in, and one step
		// below a subtree (whose bare prefix may be another route).
		path := wildcard.ReplaceAllStringFunc(r.Pattern, func(w string) string {
			if w == "{$}" {
				return ""
			}
			return "x"
		})
		if strings.HasSuffix(r.Pattern, "/") {
			path += "x"
		}
		t.Run(r.Pattern, func(t *testing.T) {
			req, _ := http.NewRequest("GET", h.url+path, nil)
			status, hdr, body := rawDo(t, req)
			code := restCode(body)
			if r.GraphQL {
				code = graphQLCode(body)
			}
			signIn := bytes.Contains(body, []byte(`data-testid="token-page"`))
			switch r.Access {
			case "api":
				if status != http.StatusUnauthorized || code != "unauthenticated" {
					t.Errorf("GET %s: %d %.200s, want 401 unauthenticated", path, status, body)
				}
			case "page":
				if status != http.StatusOK || !bytes.HasPrefix(body, []byte("<!DOCTYPE html>")) || hdr.Get("Cache-Control") != "no-store" {
					t.Errorf("GET %s: %d (Cache-Control %q) %.200s, want the page, not stored", path, status, hdr.Get("Cache-Control"), body)
				}
			case "public":
				if status == http.StatusUnauthorized || signIn || code == "not_found" {
					t.Errorf("GET %s: %d %.200s, want the route's own answer", path, status, body)
				}
			default:
				t.Errorf("route %s declares no access (%q)", r.Pattern, r.Access)
			}
		})
	}
	for _, a := range []string{"api", "page", "public"} {
		if !seen[a] {
			t.Errorf("no route is %s: the table is not the server's", a)
		}
	}
	for _, path := range []string{"/nope", "/query/x", "/healthz/x", "/app2", "/graphiql/", "/graphiql/x", "/v2/openapi.json"} {
		for _, withToken := range []bool{false, true} {
			req, _ := http.NewRequest("GET", h.url+path, nil)
			if withToken {
				req.Header.Set("Authorization", "Bearer "+h.token)
			}
			if status, _, body := rawDo(t, req); status != http.StatusNotFound || restCode(body) != "not_found" {
				t.Errorf("GET %s (token %v): %d %.200s, want 404 not_found", path, withToken, status, body)
			}
		}
	}
}

// TestHealthzMethods: /healthz answers GET and HEAD; other methods get 405
// (as its "GET /healthz" pattern did before the catch-all existed).
func TestHealthzMethods(t *testing.T) {
	h := startServer(t, harnessOpts{runtime: agenttest.Idle()})
	for method, want := range map[string]int{"GET": 200, "HEAD": 200, "POST": 405, "DELETE": 405} {
		req, _ := http.NewRequest(method, h.url+"/healthz", nil)
		if status, hdr, _ := rawDo(t, req); status != want || (want == 405 && hdr.Get("Allow") != "GET, HEAD") {
			t.Errorf("%s /healthz: %d (Allow %q), want %d", method, status, hdr.Get("Allow"), want)
		}
	}
}
