package server

import (
	"net/http"
	"strings"

	"tuttid/apperr"
	"tuttid/rest"
	"tuttid/web"
	"tuttid/webasset"
)

// access is who may use a route. Each route declares its access where it
// is registered (router.handle); a path no route declares is refused, so
// a new route without a policy is unreachable, not public.
type access int

const (
	// undeclared is the zero value: router.handle refuses it.
	undeclared access = iota
	// public routes hold no data: static files, /healthz.
	public
	// api routes need the token in the Authorization header; without it
	// they answer 401 unauthenticated.
	api
	// page routes hold no data and need no token: the page takes it from
	// ?token= or its origin's storage and sends it on each API request,
	// or asks for it. Their answers are never stored (no-store).
	page
)

func (a access) String() string {
	switch a {
	case public:
		return "public"
	case api:
		return "api"
	case page:
		return "page"
	}
	return "undeclared"
}

// route is one pattern of the mux and what guards it.
type route struct {
	pattern string
	access  access
	// graphQL answers refusals in GraphQL's shape, and lets a WebSocket
	// upgrade without the token go on to its connection_init (wsInit).
	graphQL bool
	// files: built files (JS, CSS), which keep their handler's cache
	// policy; every other answer is Cache-Control: no-store.
	files bool
	// owner, when set, makes the route's POST a command that needs the
	// session's Codex: it runs on the instance that owns the session its
	// path names, and any other forwards it there (forward.go).
	owner *sessionInPath
}

// sessionInPath names the wildcards of a route's pattern that hold the
// workspace and session ids.
type sessionInPath struct{ workspace, session string }

// router is the server's route table: the only way onto its mux.
type router struct {
	mux     *http.ServeMux
	auth    *auth
	maxBody int64
	routes  []route // as registered, for the test that each has an access
	// onOwner wraps the handler of a route that declares an owner.
	onOwner func(sessionInPath, http.Handler) http.Handler
}

// graphiqlAssets is where the GraphiQL page loads its files from.
const graphiqlAssets = "/graphiql/assets/"

// newRouter declares every route of the HTTP surface with its access.
func (s *Server) newRouter(a *auth, maxBody int64) *router {
	rt := &router{mux: http.NewServeMux(), auth: a, maxBody: maxBody,
		onOwner: func(p sessionInPath, h http.Handler) http.Handler { return markForwarded(s.forwardREST(p, h)) }}
	rt.handle(route{pattern: "/query", access: api, graphQL: true}, checkQueryBody(s.graphQL(a, maxBody)))
	// The REST routes (rest.Handler.Register) share one access; the fork
	// and the exploration run on their parent's owner.
	v1 := http.NewServeMux()
	(&rest.Handler{Forks: s.Forks, Explore: s.Explore, Logger: s.log}).Register(v1)
	rt.handle(route{pattern: "/v1/", access: api}, v1)
	for _, p := range []string{rest.ForkPath, rest.ExplorePath} {
		rt.handle(route{pattern: p, access: api,
			owner: &sessionInPath{workspace: "workspaceID", session: "agentSessionID"}}, v1)
	}
	// Without a method in the pattern: other methods answer 405, not the
	// catch-all's 404.
	rt.handle(route{pattern: "/healthz", access: public}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if webasset.AllowGetHead(w, r) {
			s.health(w, r)
		}
	}))

	gui := http.StripPrefix("/app", web.Handler())
	rt.handle(route{pattern: "/app/{$}", access: page}, gui)
	// /app is a page too: its redirect keeps ?token= (never cached).
	rt.handle(route{pattern: "/app", access: page}, http.HandlerFunc(toAppSlash))
	rt.handle(route{pattern: "/app/", access: public, files: true}, gui) // the GUI's built files
	gq := graphiqlHandler()
	rt.handle(route{pattern: "/{$}", access: page}, gq)
	rt.handle(route{pattern: graphiqlAssets, access: public, files: true}, gq)

	// Everything else: no route declares it.
	rt.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, apperr.NotFound, "no such path")
	})
	return rt
}

// handle registers h at r.pattern behind r's access check and the body
// limit (which reads nothing for a caller the check refuses).
func (rt *router) handle(r route, h http.Handler) {
	if r.access == undeclared {
		panic("server: route " + r.pattern + " declares no access")
	}
	if o := r.owner; o != nil {
		// A misnamed wildcard would read "": every fork would look local.
		for _, w := range []string{o.workspace, o.session} {
			if !strings.Contains(r.pattern, "{"+w+"}") {
				panic("server: route " + r.pattern + " has no wildcard {" + w + "}")
			}
		}
		h = rt.onOwner(*o, h)
	}
	rt.routes = append(rt.routes, r)
	if r.access == page {
		h = forceNoStore(h)
	}
	rt.mux.Handle(r.pattern, rt.auth.guard(r, limitBody(h, rt.maxBody, r.graphQL)))
}

// ServeHTTP serves the mux, which is not exposed: its Handle would take a
// route without an access.
func (rt *router) ServeHTTP(w http.ResponseWriter, r *http.Request) { rt.mux.ServeHTTP(w, r) }

// toAppSlash is what ServeMux would answer to /app: a redirect to the GUI.
func toAppSlash(w http.ResponseWriter, r *http.Request) {
	u := "/app/"
	if r.URL.RawQuery != "" {
		u += "?" + r.URL.RawQuery
	}
	http.Redirect(w, r, u, http.StatusMovedPermanently)
}

// refuse answers an error in the route's shape: GraphQL's on /query,
// REST's elsewhere.
func refuse(w http.ResponseWriter, graphQL bool, code apperr.Code, message string) {
	if graphQL {
		writeGraphQLError(w, code, message)
		return
	}
	writeError(w, code, message)
}
