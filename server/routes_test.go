package server

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestRouterAccess: each access lets through exactly what it says, a route
// without one cannot be registered, and a path no route declares is
// refused with 404 not_found, token or not.
func TestRouterAccess(t *testing.T) {
	const token = "router-test-token-0123456789"
	rt := &router{mux: http.NewServeMux(), auth: newAuth(token, false, slog.New(slog.NewTextHandler(io.Discard, nil))), maxBody: 1 << 10}
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "served") })
	rt.handle(route{pattern: "/public", access: public}, ok)
	rt.handle(route{pattern: "/api", access: api}, ok)
	rt.handle(route{pattern: "/gql", access: api, graphQL: true}, ok)
	rt.handle(route{pattern: "/page", access: page}, ok)
	rt.mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { writeError(w, "not_found", "no such path") })

	for _, tc := range []struct {
		name, path string
		token      bool
		status     int
		body       string // a part of the answer
	}{
		{"public", "/public", false, 200, "served"},
		{"api without the token", "/api", false, 401, `"code":"unauthenticated"`},
		{"api with the token", "/api", true, 200, "served"},
		{"GraphQL api without the token", "/gql", false, 401, `"errors":[{"extensions":{"code":"unauthenticated"}`},
		{"GraphQL api with the token", "/gql", true, 200, "served"},
		{"page without the token (it holds no data, and asks)", "/page", false, 200, "served"},
		{"page with the token", "/page", true, 200, "served"},
		{"undeclared", "/other", false, 404, `"code":"not_found"`},
		{"undeclared with the token", "/api/more", true, 404, `"code":"not_found"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest("GET", tc.path, nil)
			if tc.token {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			w := httptest.NewRecorder()
			rt.ServeHTTP(w, req)
			if w.Code != tc.status || !strings.Contains(w.Body.String(), tc.body) {
				t.Errorf("got %d %.200s, want %d with %s", w.Code, w.Body, tc.status, tc.body)
			}
		})
	}

	t.Run("a route without an access", func(t *testing.T) {
		defer func() {
			if recover() == nil {
				t.Error("handle registered a route that declares no access")
			}
		}()
		rt.handle(route{pattern: "/forgotten"}, ok)
	})
}
