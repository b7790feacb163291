package server

import (
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path"
	"strings"

	"tuttid/apperr"
)

// checkOrigin refuses what a web page of another origin could make a
// browser send here: a WebSocket upgrade, or a request that changes state
// (a "simple" cross-site POST needs no preflight). Requests without an
// Origin header (not from a page) pass; a page's Origin must be tuttid's
// own origin (ownOrigin) or match --allowed-origins. Another port of the
// same host is another origin: a dev server on localhost:3000 is not
// tuttid on localhost:8080.
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
	if err != nil || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") {
		return false
	}
	if ownOrigin(r, u, hosts) {
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

// ownOrigin: the Origin is tuttid's own, the one its pages have: the
// request's scheme, and the host and port the request came to (its Host),
// which must be an allowed host. An Origin equal to the Host is not enough
// by itself: under DNS rebinding both are the attacker's name, which the
// host policy refuses.
func ownOrigin(r *http.Request, u *url.URL, hosts hostPolicy) bool {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if !strings.EqualFold(u.Scheme, scheme) || !hosts.allows(u.Host) || !hosts.allows(r.Host) {
		return false
	}
	oh, op := splitOriginHost(u.Host, scheme)
	rh, rp := splitOriginHost(r.Host, scheme)
	return oh != "" && oh == rh && op == rp
}

// splitOriginHost is a host[:port]'s lower-case host and its port, the
// scheme's default when it has none.
func splitOriginHost(hostport, scheme string) (host, port string) {
	host = hostName(hostport)
	if _, p, err := net.SplitHostPort(hostport); err == nil && p != "" {
		return host, p
	}
	if scheme == "https" {
		return host, "443"
	}
	return host, "80"
}
