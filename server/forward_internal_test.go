package server

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"

	"tuttid/graph/generated"
	"tuttid/rest"
)

// Forwarded requests carry the owner's advertise host: a registered
// instance's advertise host is allowed, nothing else is added.
func TestHostPolicyAllowsInstanceHosts(t *testing.T) {
	p := newHostPolicy("0.0.0.0:8080", nil)
	p.instances = func(h string) bool { return h == "tuttid-a.internal" || h == "10.0.0.7" }
	for _, tc := range []struct {
		host string
		ok   bool
	}{
		{"tuttid-a.internal:8080", true},
		{"TUTTID-A.internal", true},
		{"10.0.0.7:9000", true},
		{"tuttid-b.internal:8080", false},
		{"evil.example", false},
	} {
		if got := p.allows(tc.host); got != tc.ok {
			t.Errorf("allows(%q) = %v, want %v", tc.host, got, tc.ok)
		}
	}
}

// Which mutations go to the owner (the schema's @owner): every command that
// needs the session's Codex; updateSession only when it archives or
// restores.
func TestOwnerCommands(t *testing.T) {
	mutation := schema().Types["Mutation"]
	for _, tc := range []struct {
		field string
		input map[string]any
		want  bool
	}{
		{"sendMessage", map[string]any{}, true},
		{"steerTurn", map[string]any{}, true},
		{"interruptTurn", map[string]any{}, true},
		{"forkSession", map[string]any{}, true},
		{"respondToApproval", map[string]any{}, true},
		{"deleteSession", map[string]any{}, true},
		{"applySessionChanges", map[string]any{}, true},
		{"updateSession", map[string]any{"archived": true}, true},
		{"updateSession", map[string]any{"archived": false}, true},
		{"updateSession", map[string]any{"archived": nil}, true},
		{"updateSession", map[string]any{"title": "x"}, false},
		{"startSession", map[string]any{}, false},
		{"createWorkspace", map[string]any{}, false},
	} {
		def := mutation.Fields.ForName(tc.field)
		if def == nil {
			t.Fatalf("the schema has no mutation %s", tc.field)
		}
		if _, _, got := ownerCommand(def, map[string]any{"input": tc.input}); got != tc.want {
			t.Errorf("%s %v forwarded = %v, want %v", tc.field, tc.input, got, tc.want)
		}
	}
}

// The session a command goes to is the one its @owner names.
func TestOwnerCommandSession(t *testing.T) {
	def := schema().Types["Mutation"].Fields.ForName("sendMessage")
	ws, sid, ok := ownerCommand(def, map[string]any{"input": map[string]any{"workspaceId": "w1", "agentSessionId": "s1", "text": "hi"}})
	if !ok || ws != "w1" || sid != "s1" {
		t.Errorf("sendMessage: (%q, %q, %v), want (w1, s1, true)", ws, sid, ok)
	}
	if _, _, ok := ownerCommand(def, map[string]any{}); ok {
		t.Error("sendMessage without its input: forwarded")
	}
}

// Every mutation is either a command of its session's owner (@owner) or
// one any instance carries out: a new mutation fails here until someone
// says which, so a command that calls the session's Codex cannot be added
// without its @owner. Each @owner names fields the schema has.
func TestOwnerDeclaredByEveryMutation(t *testing.T) {
	onOwner := map[string]bool{
		"sendMessage": true, "steerTurn": true, "interruptTurn": true, "forkSession": true,
		"respondToApproval": true, "deleteSession": true, "applySessionChanges": true, "updateSession": true,
		"exploreSession": true, "applyExplorationBranch": true, "archiveExplorationBranches": true, "reviewExplorationBranch": true,
		"stopExploration": true, // its branches' turns (Codex) and the owner's queue and checks
	}
	// Database writes, or the Codex of the instance that received them
	// (startSession starts the session there; the login and the
	// workspace's settings are not a session's).
	anywhere := map[string]bool{
		"createWorkspace": true, "updateWorkspace": true, "startSession": true,
		"startCodexLogin": true, "cancelCodexLogin": true, "logoutCodex": true,
		"markExplorationWinner": true, // a row of the exploration
	}
	s := schema()
	for _, f := range s.Types["Mutation"].Fields {
		d := f.Directives.ForName(ownerDirective)
		switch {
		case d != nil && !onOwner[f.Name]:
			t.Errorf("%s is marked @owner but is not in this test's list of owner commands", f.Name)
		case d == nil && onOwner[f.Name]:
			t.Errorf("%s needs its session's owner but lacks @owner in the schema", f.Name)
		case d == nil && !anywhere[f.Name]:
			t.Errorf("mutation %s: say where it runs: @owner in the schema if it needs the session's Codex or files, else add it to this test's anywhere list", f.Name)
		}
		if d == nil {
			continue
		}
		for _, a := range d.Arguments {
			path, _ := a.Value.Value(nil)
			p, _ := path.(string)
			if err := schemaPath(s, f, p); err != nil {
				t.Errorf("%s @owner(%s: %q): %v", f.Name, a.Name, p, err)
			}
		}
	}
	for name := range onOwner {
		if s.Types["Mutation"].Fields.ForName(name) == nil {
			t.Errorf("the schema has no mutation %s", name)
		}
	}
}

// schemaPath checks that path (argument, then fields) exists on f.
func schemaPath(s *ast.Schema, f *ast.FieldDefinition, path string) error {
	parts := strings.Split(path, ".")
	arg := f.Arguments.ForName(parts[0])
	if arg == nil {
		return fmt.Errorf("no argument %s", parts[0])
	}
	typ := arg.Type
	for _, k := range parts[1:] {
		def := s.Types[typ.Name()]
		if def == nil || def.Kind != ast.InputObject {
			return fmt.Errorf("%s is not an input object", typ.Name())
		}
		fd := def.Fields.ForName(k)
		if fd == nil {
			return fmt.Errorf("%s has no field %s", def.Name, k)
		}
		typ = fd.Type
	}
	return nil
}

// schema is the schema gqlgen embeds, as the server serves it.
func schema() *ast.Schema {
	return generated.NewExecutableSchema(generated.Config{}).Schema()
}

// The REST fork's route declares that it runs on its parent's owner, with
// the wildcards of its pattern that hold the ids; the server's router
// hands such a route's requests to the forwarding with those ids.
func TestOwnerOfRESTFork(t *testing.T) {
	s := &Server{}
	rt := s.newRouter(&auth{off: true}, 1<<20)
	var fork *route
	for i, r := range rt.routes {
		if r.pattern == rest.ForkPath {
			fork = &rt.routes[i]
		}
	}
	if fork == nil || fork.owner == nil || fork.access != api {
		t.Fatalf("the REST fork's route: %+v, want an api route that declares its owner", fork)
	}

	// A route with an owner: its requests reach onOwner's handler with
	// the ids its wildcards hold.
	var got []string
	r := &router{mux: http.NewServeMux(), auth: &auth{off: true}, maxBody: 1 << 20,
		onOwner: func(p sessionInPath, h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				got = append(got, req.PathValue(p.workspace), req.PathValue(p.session))
				h.ServeHTTP(w, req)
			})
		}}
	r.handle(route{pattern: rest.ForkPath, access: api, owner: fork.owner}, http.NotFoundHandler())
	r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/v1/workspaces/w1/agent-sessions/s1/fork", nil))
	if len(got) != 2 || got[0] != "w1" || got[1] != "s1" {
		t.Errorf("ids from the path: %q, want [w1 s1]", got)
	}

	// A wildcard the pattern lacks is refused where the route is declared.
	defer func() {
		if recover() == nil {
			t.Error("a route whose owner names a wildcard its pattern lacks was registered")
		}
	}()
	r.handle(route{pattern: "/v1/sessions/{id}/x", access: api, owner: &sessionInPath{workspace: "ws", session: "id"}}, http.NotFoundHandler())
}
