package server

import (
	"testing"
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

// Which mutations go to the owner: every command that needs the session's
// Codex; updateSession only when it archives or restores.
func TestOwnerCommands(t *testing.T) {
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
		{"updateSession", map[string]any{"title": "x"}, false},
		{"startSession", map[string]any{}, false},
		{"createWorkspace", map[string]any{}, false},
	} {
		needs, ok := ownerCommands[tc.field]
		if got := ok && needs(tc.input); got != tc.want {
			t.Errorf("%s %v forwarded = %v, want %v", tc.field, tc.input, got, tc.want)
		}
	}
}
