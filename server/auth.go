package server

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"log/slog"
	"net/http"
	"strings"

	"github.com/99designs/gqlgen/graphql/handler/transport"

	"tuttid/apperr"
)

// auth checks the token of every API request. The token comes only as
// "Authorization: Bearer <token>"; a WebSocket may instead send it in its
// connection_init payload (see wsInit). No cookie carries it: a browser
// sends a host's cookies to every port of that host, so any server on
// another loopback port would receive it. The pages keep it in their own
// origin's localStorage (web/ui/src/client.ts) and send it as the header.
type auth struct {
	sum [sha256.Size]byte // of the token
	// off: --no-auth, every request passes.
	off bool
	log *slog.Logger
}

func newAuth(token string, off bool, log *slog.Logger) *auth {
	return &auth{sum: sha256.Sum256([]byte(token)), off: off, log: log}
}

// valid compares in constant time; hashing first also hides the length.
func (a *auth) valid(token string) bool {
	if token == "" {
		return false
	}
	sum := sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(sum[:], a.sum[:]) == 1
}

type authCtxKey struct{}

// authenticated reports whether the request carried the token in its
// header (the WebSocket init uses it).
func authenticated(ctx context.Context) bool {
	ok, _ := ctx.Value(authCtxKey{}).(bool)
	return ok
}

// requestOK: the request carries the token in its Authorization header.
func (a *auth) requestOK(r *http.Request) bool {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && a.valid(strings.TrimSpace(tok))
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
			// A page holds no data: it reads ?token= or its storage, and
			// asks for the token when it has none (web/ui/src/client.ts).
			next.ServeHTTP(w, req)
		default: // unreachable: router.handle refuses an undeclared access
			refuse(w, r.graphQL, apperr.NotFound, "no such path")
		}
	})
}

func isUpgrade(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// WebSocketUnauthenticated closes a WebSocket whose connection_init (and
// upgrade) did not carry the token, before any subscription runs.
const WebSocketUnauthenticated = 4403

// wsInit accepts a connection whose upgrade carried the token (its
// Authorization header) or whose connection_init payload has {"Authorization":"Bearer <token>"}.
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
