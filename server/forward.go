package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"tuttid/apperr"
	"tuttid/forward"
	"tuttid/instance"
	"tuttid/rest"
)

// Commands that need the session's Codex run on the instance that owns the
// session (forward's package doc). They are forwarded at the transport
// edge: the same GraphQL operation, or the same REST request, re-sent to
// the owner, whose answer is this one's. The services stay unaware of
// instances, and the answer is the owner's by construction (errors
// included). The GraphQL side is an operation interceptor of the executor,
// not an HTTP middleware, so a mutation sent over a WebSocket (subscribe
// or start) is forwarded as one sent by POST is; the owner is always
// asked by POST.

// forwardedByKey holds the forward.Header of the request in its context.
type forwardedByKey struct{}

// markForwarded notes in the context whether the request was forwarded by
// another instance (after the token check: only a holder of the token can
// mark a request; a WebSocket's upgrade is marked by its own header, and
// no operation runs on it before connection_init has shown the token).
func markForwarded(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if by := r.Header.Get(forward.Header); by != "" {
			r = r.WithContext(context.WithValue(r.Context(), forwardedByKey{}, by))
		}
		next.ServeHTTP(w, r)
	})
}

func forwardedBy(ctx context.Context) string {
	by, _ := ctx.Value(forwardedByKey{}).(string)
	return by
}

// ownerDirective marks, in the schema, a mutation that needs its
// session's Codex (graph/schema.graphqls: @owner). The schema is the one
// list of those commands; the forwarding reads the declaration off the
// validated operation's field definitions.
const ownerDirective = "owner"

// ownerCommand says whether a mutation field, with these arguments, is a
// command that runs on its session's owner, and which session: the ids
// at the paths its @owner names, "" when absent (the owner lookup, or the
// resolver, refuses those).
func ownerCommand(def *ast.FieldDefinition, args map[string]any) (ws, sid string, ok bool) {
	if def == nil {
		return "", "", false
	}
	d := def.Directives.ForName(ownerDirective)
	if d == nil {
		return "", "", false
	}
	decl := d.ArgumentMap(nil)
	if when, _ := decl["ifSet"].(string); when != "" {
		if _, set := argumentAt(args, when); !set {
			return "", "", false
		}
	}
	wsPath, _ := decl["workspace"].(string)
	sidPath, _ := decl["session"].(string)
	// Without the argument that holds the session (which validation
	// requires), there is no session to go to.
	if arg, _ := argumentAt(args, strings.SplitN(sidPath, ".", 2)[0]); arg == nil {
		return "", "", false
	}
	w, _ := argumentAt(args, wsPath)
	s, _ := argumentAt(args, sidPath)
	ws, _ = w.(string)
	sid, _ = s.(string)
	return ws, sid, true
}

// argumentAt is the value at a dot-separated path of arguments ("input.
// agentSessionId": the argument input, its field agentSessionId), and
// whether it is set (null included).
func argumentAt(args map[string]any, path string) (any, bool) {
	var v any = args
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

// forwardOperations is the GraphQL side: a mutation whose commands belong
// to a session another instance owns is re-sent there whole. A mutation
// mixing sessions of different owners (or of this instance and another) is
// refused: it cannot run in one place.
func (s *Server) forwardOperations(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	oc := graphql.GetOperationContext(ctx)
	if s.forward == nil || oc.Operation == nil || oc.Operation.Operation != ast.Mutation {
		return next(ctx)
	}
	var owner *instance.Info
	local := ""
	for _, f := range graphql.CollectFields(oc, oc.Operation.SelectionSet, []string{"Mutation"}) {
		ws, sid, ok := ownerCommand(f.Definition, f.ArgumentMap(oc.Variables))
		if !ok {
			continue
		}
		o, err := s.forward.Owner(ctx, ws, sid, forwardedBy(ctx))
		if err != nil {
			return answerOnce(errorResponse(f.Alias, err))
		}
		switch {
		case o == nil:
			local = f.Alias
		case owner == nil:
			owner = o
		case owner.ID != o.ID:
			return answerOnce(errorResponse(f.Alias, apperr.New(apperr.InvalidInput,
				"this mutation has commands for sessions of instances %q and %q: send them as separate operations", owner.ID, o.ID)))
		}
	}
	if owner == nil {
		return next(ctx)
	}
	if local != "" {
		return answerOnce(errorResponse(local, apperr.New(apperr.InvalidInput,
			"this mutation has commands for sessions of this instance and of instance %q: send them as separate operations", owner.ID)))
	}
	body, err := json.Marshal(map[string]any{"query": oc.RawQuery, "operationName": oc.OperationName, "variables": oc.Variables})
	if err != nil {
		return answerOnce(errorResponse("", apperr.Wrap(err, apperr.Internal, "internal error")))
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json")
	ans, err := s.forward.Send(ctx, owner, http.MethodPost, "/query", h, body)
	if err != nil {
		return answerOnce(errorResponse("", err))
	}
	var resp graphql.Response
	if err := json.Unmarshal(ans.Body, &resp); err != nil {
		return answerOnce(errorResponse("", apperr.Wrap(err, apperr.SessionUnavailable,
			"instance %q answered the forwarded command with something other than GraphQL (HTTP %d)", owner.ID, ans.Status)))
	}
	return answerOnce(&resp)
}

// answerOnce is a ResponseHandler with one response: a mutation's.
func answerOnce(r *graphql.Response) graphql.ResponseHandler {
	done := false
	return func(context.Context) *graphql.Response {
		if done {
			return nil
		}
		done = true
		return r
	}
}

// errorResponse is the answer of a mutation that did not run: the error
// on the field (alias) it concerns, with its code, and no data.
func errorResponse(alias string, err error) *graphql.Response {
	app := apperr.From(err)
	e := &gqlerror.Error{Message: app.Message, Extensions: map[string]any{"code": string(app.Code)}}
	if alias != "" {
		e.Path = ast.Path{ast.PathName(alias)}
	}
	return &graphql.Response{Errors: gqlerror.List{e}, Data: json.RawMessage("null")}
}

// forwardREST re-sends the POST of a route that declares an owner
// (routes.go), when another instance owns the session its path names, to
// that instance and passes its answer back (status, type and body).
func (s *Server) forwardREST(p sessionInPath, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.forward == nil || r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		owner, err := s.forward.Owner(r.Context(), r.PathValue(p.workspace), r.PathValue(p.session), forwardedBy(r.Context()))
		if err != nil {
			rest.WriteError(w, apperr.From(err))
			return
		}
		if owner == nil {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body) // bounded by the route's body limit
		if err != nil {
			rest.WriteError(w, apperr.Wrap(err, apperr.RequestTooLarge, "the request body could not be read whole"))
			return
		}
		ans, err := s.forward.Send(r.Context(), owner, r.Method, r.URL.RequestURI(), r.Header, body)
		if err != nil {
			rest.WriteError(w, apperr.From(err))
			return
		}
		for _, k := range []string{"Content-Type", "Location"} {
			if v := ans.Header.Get(k); v != "" {
				w.Header().Set(k, v)
			}
		}
		w.WriteHeader(ans.Status)
		w.Write(ans.Body)
	})
}
