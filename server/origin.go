package server

import (
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"strings"

	"tuttid/apperr"
	"tuttid/rest"
)

// checkOrigin refuses what a web page of another site could make a
// browser send here: a WebSocket upgrade, or a request that changes state
// (a "simple" cross-site POST needs no preflight). Requests without an
// Origin header (not from a page) and from this server's own pages pass.
// coder/websocket applies the same rule to upgrades as a second line, but
// its refusal goes to the standard logger as an error; here it is a clean
// 403 and a debug line.
func checkOrigin(next http.Handler, patterns []string, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if needsOriginCheck(r) && !originAllowed(r, patterns) {
			log.DebugContext(r.Context(), "request refused: origin not allowed", "origin", r.Header.Get("Origin"), "path", r.URL.Path)
			rest.WriteError(w, apperr.New(apperr.ForbiddenOrigin, "requests from pages of this origin are not allowed; see --allowed-origins"))
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

func originAllowed(r *http.Request, patterns []string) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true // not a browser page
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	host := strings.ToLower(u.Host)
	if host == strings.ToLower(r.Host) {
		return true
	}
	for _, p := range patterns {
		if ok, err := path.Match(strings.ToLower(p), host); err == nil && ok {
			return true
		}
	}
	return false
}
