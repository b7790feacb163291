package server

import (
	"log/slog"
	"net"
	"net/http"
	"strings"

	"tuttid/apperr"
	"tuttid/rest"
)

// hostPolicy says which names a request's Host (and a page's Origin) may
// carry. A page of evil.example that re-points its name at 127.0.0.1 (DNS
// rebinding) still sends Host: evil.example, so only names the user chose
// reach tuttid.
type hostPolicy struct {
	// names are exact host names (lower case, no port, IPv6 without
	// brackets); suffixes come from "*.example.com" patterns (".example.com").
	names    map[string]bool
	suffixes []string
	// instances allows the hosts of the registered instances' advertise
	// URLs (instance.Registry.AllowsHost), when set.
	instances func(host string) bool
}

// loopbackNames are always allowed, at any port.
var loopbackNames = []string{"localhost", "127.0.0.1", "::1"}

// newHostPolicy allows the loopback names, the host of addr (the listen
// address) and the patterns: host names, or *.suffix for any subdomain.
// A pattern's port, if any, is ignored: every port of an allowed name is
// allowed.
func newHostPolicy(addr string, patterns []string) hostPolicy {
	p := hostPolicy{names: map[string]bool{}}
	for _, n := range loopbackNames {
		p.names[n] = true
	}
	if h := hostName(addr); h != "" {
		p.names[h] = true
	}
	for _, pat := range patterns {
		pat = strings.ToLower(strings.TrimSpace(pat))
		if rest, ok := strings.CutPrefix(pat, "*."); ok {
			if rest = hostName(rest); rest != "" {
				p.suffixes = append(p.suffixes, "."+rest)
			}
			continue
		}
		if h := hostName(pat); h != "" {
			p.names[h] = true
		}
	}
	return p
}

// allows reports whether hostport (a Host header or an Origin's host) names
// an allowed host.
func (p hostPolicy) allows(hostport string) bool {
	h := hostName(hostport)
	if h == "" {
		return false
	}
	if p.names[h] {
		return true
	}
	for _, s := range p.suffixes {
		if strings.HasSuffix(h, s) && len(h) > len(s) {
			return true
		}
	}
	return p.instances != nil && p.instances(h)
}

// hostName is the lower-case host of a host[:port], IPv6 without brackets;
// "" when it is malformed.
func hostName(hostport string) string {
	hostport = strings.ToLower(strings.TrimSpace(hostport))
	if hostport == "" {
		return ""
	}
	h := hostport
	if sh, _, err := net.SplitHostPort(hostport); err == nil {
		h = sh
	} else if strings.HasPrefix(hostport, "[") && strings.HasSuffix(hostport, "]") {
		h = hostport[1 : len(hostport)-1]
	}
	h = strings.TrimSuffix(h, ".") // "localhost." is localhost
	if h == "" || strings.ContainsAny(h, "/@ \t[]") {
		return ""
	}
	return h
}

// checkHost refuses, with 403 forbidden_host, every request (WebSocket
// upgrades and /healthz included) whose Host is not allowed.
func checkHost(next http.Handler, hosts hostPolicy, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hosts.allows(r.Host) {
			log.DebugContext(r.Context(), "request refused: host not allowed", "host", r.Host, "path", r.URL.Path)
			writeError(w, apperr.ForbiddenHost, "requests for this host name are not allowed; see --allowed-hosts")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// writeError answers {"error":{"code":...,"message":...}} with the code's
// status, as REST does.
func writeError(w http.ResponseWriter, code apperr.Code, message string) {
	rest.WriteError(w, apperr.New(code, "%s", message))
}

// writeGraphQLError answers a GraphQL-over-HTTP error with the code's status.
func writeGraphQLError(w http.ResponseWriter, code apperr.Code, message string) {
	rest.WriteJSON(w, code.HTTPStatus(), map[string]any{"errors": []any{map[string]any{
		"message": message, "extensions": map[string]string{"code": string(code)}}}})
}
