package server

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/transport"

	"tuttid/apperr"
)

// auth checks the token of every API request and runs the browser's
// cookie flow. The token comes as "Authorization: Bearer <token>" or as the
// cookie that GET /app?token= (and /?token=) sets; a WebSocket may instead
// send it in its connection_init payload (see wsInit).
type auth struct {
	sum [sha256.Size]byte // of the token
	// off: --no-auth, every request passes.
	off bool
	log *slog.Logger
}

func newAuth(token string, off bool, log *slog.Logger) *auth {
	return &auth{sum: sha256.Sum256([]byte(token)), off: off, log: log}
}

// cookieMaxAge keeps a browser signed in across restarts of the browser.
const cookieMaxAge = 30 * 24 * time.Hour

// valid compares in constant time; hashing first also hides the length.
func (a *auth) valid(token string) bool {
	if token == "" {
		return false
	}
	sum := sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(sum[:], a.sum[:]) == 1
}

// cookieName carries the port so that two tuttids on one machine (whose
// cookies a browser shares across ports) do not overwrite each other's.
func cookieName(r *http.Request) string {
	_, port, err := net.SplitHostPort(r.Host)
	if err != nil || port == "" {
		return "tuttid-token"
	}
	return "tuttid-token-" + port
}

type authCtxKey struct{}

// authenticated reports whether the request carried the token in a header
// or cookie (the WebSocket init uses it).
func authenticated(ctx context.Context) bool {
	ok, _ := ctx.Value(authCtxKey{}).(bool)
	return ok
}

// requestOK: the request carries the token in its header or cookie.
func (a *auth) requestOK(r *http.Request) bool {
	if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && a.valid(strings.TrimSpace(tok)) {
		return true
	}
	c, err := r.Cookie(cookieName(r))
	return err == nil && a.valid(c.Value)
}

// guard puts r's access check in front of next.
func (a *auth) guard(r route, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if a.off {
			next.ServeHTTP(w, req.WithContext(context.WithValue(req.Context(), authCtxKey{}, true)))
			return
		}
		switch r.access {
		case public:
			next.ServeHTTP(w, req)
		case api:
			ok := a.requestOK(req)
			if ok || (r.graphQL && isUpgrade(req)) {
				// An upgrade without the token may still send it in
				// connection_init; wsInit closes it with 4403 otherwise.
				next.ServeHTTP(w, req.WithContext(context.WithValue(req.Context(), authCtxKey{}, ok)))
				return
			}
			a.log.DebugContext(req.Context(), "request refused: no valid token", "path", req.URL.Path)
			refuse(w, r.graphQL, apperr.Unauthenticated,
				"missing or wrong token: send the header \"Authorization: Bearer TOKEN\" (TOKEN is --token, or the file named token beside the database)")
		case page:
			a.page(next, w, req)
		default: // unreachable: router.handle refuses an undeclared access
			refuse(w, r.graphQL, apperr.NotFound, "no such path")
		}
	})
}

func isUpgrade(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// page runs the cookie flow: ?token= sets the cookie and redirects to the
// same URL without it; without a valid cookie the page asks for the token.
func (a *auth) page(next http.Handler, w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Has("token") {
		if !a.valid(q.Get("token")) {
			a.askToken(w, http.StatusUnauthorized, "That token is not right.")
			return
		}
		http.SetCookie(w, &http.Cookie{
			Name: cookieName(r), Value: q.Get("token"), Path: "/",
			MaxAge: int(cookieMaxAge / time.Second), HttpOnly: true, SameSite: http.SameSiteStrictMode,
			Secure: r.TLS != nil,
		})
		q.Del("token")
		u := *r.URL
		u.RawQuery = q.Encode()
		w.Header().Set("Cache-Control", "no-store")
		http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
		return
	}
	if !a.requestOK(r) {
		a.askToken(w, http.StatusUnauthorized, "")
		return
	}
	next.ServeHTTP(w, r)
}

// tokenPageCSP: the page has no script; its form submits to itself.
const tokenPageCSP = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

var tokenPage = template.Must(template.New("token").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>tuttid: token needed</title>
<style>body{font:16px system-ui,sans-serif;max-width:34em;margin:4em auto;padding:0 1em}input{width:100%;font:inherit;margin:.5em 0}</style>
</head><body data-testid="token-page">
<h1>tuttid needs its token</h1>
{{if .}}<p role="alert" data-testid="token-error">{{.}}</p>{{end}}
<p>Open the address tuttid printed at startup (it ends in <code>?token=…</code>), or paste the token
from the file <code>token</code> beside tuttid's database.</p>
<form method="get"><label>Token <input name="token" type="password" autocomplete="off" required autofocus data-testid="token-input"></label>
<button type="submit">Open</button></form>
</body></html>
`))

func (a *auth) askToken(w http.ResponseWriter, status int, problem string) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", tokenPageCSP)
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = tokenPage.Execute(w, problem)
}

// WebSocketUnauthenticated closes a WebSocket whose connection_init (and
// upgrade) did not carry the token, before any subscription runs.
const WebSocketUnauthenticated = 4403

// wsInit accepts a connection whose upgrade carried the token (header or
// cookie) or whose connection_init payload has {"Authorization":"Bearer <token>"}.
func (a *auth) wsInit(ctx context.Context, p transport.InitPayload) (context.Context, *transport.InitPayload, error) {
	if authenticated(ctx) {
		return ctx, nil, nil
	}
	if tok, ok := strings.CutPrefix(p.Authorization(), "Bearer "); ok && a.valid(strings.TrimSpace(tok)) {
		return ctx, nil, nil
	}
	a.log.DebugContext(ctx, "websocket refused: no valid token")
	ctx = transport.WithWebsocketCloseCode(ctx, WebSocketUnauthenticated)
	ctx = transport.AppendCloseReason(ctx, string(apperr.Unauthenticated))
	return ctx, nil, apperr.New(apperr.Unauthenticated, "missing or wrong token")
}
