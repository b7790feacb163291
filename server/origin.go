package server

import (
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"strings"

	"tuttid/apperr"
)

// checkOrigin refuses what a web page of another site could make a
// browser send here: a WebSocket upgrade, or a request that changes state
// (a "simple" cross-site POST needs no preflight). Requests without an
// Origin header (not from a page) pass; a page's Origin must name an allowed
// host or match --allowed-origins. An Origin equal to the request's own
// Host is not enough by itself: under DNS rebinding both are the
// attacker's name.
func checkOrigin(next http.Handler, hosts hostPolicy, patterns []string, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if needsOriginCheck(r) && !originAllowed(r, hosts, patterns) {
			log.DebugContext(r.Context(), "request refused: origin not allowed", "origin", r.Header.Get("Origin"), "path", r.URL.Path)
			writeError(w, apperr.ForbiddenOrigin, "requests from pages of this origin are not allowed; see --allowed-origins")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func needsOriginCheck(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return r.Header.Get("Upgrade") != ""
	}
	return true
}

func originAllowed(r *http.Request, hosts hostPolicy, patterns []string) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true // not a browser page
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	if hosts.allows(u.Host) {
		return true
	}
	host := strings.ToLower(u.Host)
	for _, p := range patterns {
		if ok, err := path.Match(strings.ToLower(p), host); err == nil && ok {
			return true
		}
	}
	return false
}
