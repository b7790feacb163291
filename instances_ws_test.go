package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"tuttid/forward"
	"tuttid/instance"
)

// wsOperation runs one operation over a GraphQL WebSocket to p (proto is
// graphql-transport-ws or the legacy graphql-ws), the token in
// connection_init as the GUI sends it, header on the upgrade (nil: none),
// and returns the payload of its one result, as the server wrote it.
func (p *proc) wsOperation(proto string, header http.Header, query string, vars map[string]any) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := dialGraphQL(ctx, p.url, proto, header)
	if err != nil {
		return nil, err
	}
	defer c.close()
	start, result := "subscribe", "next"
	if proto == "graphql-ws" {
		start, result = "start", "data"
	}
	if err := c.subscribe(ctx, start, "1", query, vars); err != nil {
		return nil, err
	}
	var payload []byte
	for {
		f, err := c.read(ctx)
		if err != nil {
			return nil, fmt.Errorf("read: %w", err)
		}
		switch f.Type {
		case "ping":
			_ = c.send(ctx, gqlFrame{Type: "pong"})
		case result:
			if payload != nil {
				return nil, fmt.Errorf("a second result %s after %s", f.Payload, payload)
			}
			payload = f.Payload
		case "complete":
			if payload == nil {
				return nil, fmt.Errorf("complete without a result")
			}
			return payload, nil
		case "error", "connection_error":
			return nil, fmt.Errorf("%s: %s", f.Type, f.Payload)
		}
	}
}

// forwards counts the commands p forwarded (its debug log).
func (p *proc) forwards() int {
	return strings.Count(p.logs(), "forward: command carried out by its owner")
}

// awaitForwards waits for p's log to show want forwarded commands.
func (p *proc) awaitForwards(want int) int {
	deadline := time.Now().Add(5 * time.Second)
	for p.forwards() < want && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	return p.forwards()
}

// wsErrors decodes a result payload's errors.
func wsErrors(t *testing.T, payload []byte) []gqlErr {
	t.Helper()
	var r struct{ Errors []gqlErr }
	if err := json.Unmarshal(payload, &r); err != nil {
		t.Fatalf("result %s: %v", payload, err)
	}
	return r.Errors
}

// TestInstancesForwardOverWebSocket: a command for another instance's
// session sent over a GraphQL WebSocket (either subprotocol) is forwarded
// to the owner as it is over HTTP POST, and its answer is the owner's,
// errors and their codes included; reads over the WebSocket are served
// where they arrive; a forwarded command is not forwarded again; while the
// owner is gone the command fails with agent.session_unavailable.
func TestInstancesForwardOverWebSocket(t *testing.T) {
	c := newCluster(t)
	a, b := c.start("a"), c.start("b")
	ws := c.workspace(b)
	sid := c.session(a, ws, "on a")
	vars := map[string]any{"ws": ws, "id": sid}

	for _, proto := range []string{"graphql-transport-ws", "graphql-ws"} {
		cases := []struct {
			name  string
			query string
			vars  map[string]any
			// forwarded: b sends the command to a.
			forwarded bool
			check     func(t *testing.T, fromWS []byte)
		}{
			{
				name:      "sendMessage",
				query:     `mutation($ws: ID!, $id: ID!, $text: String!) { sendMessage(input: {workspaceId: $ws, agentSessionId: $id, text: $text}) { id } }`,
				vars:      map[string]any{"ws": ws, "id": sid, "text": "over " + proto},
				forwarded: true,
				check: func(t *testing.T, fromWS []byte) {
					var r struct {
						Data   struct{ SendMessage struct{ ID string } }
						Errors []gqlErr
					}
					if err := json.Unmarshal(fromWS, &r); err != nil || len(r.Errors) > 0 || r.Data.SendMessage.ID == "" {
						t.Fatalf("sendMessage over %s: %s %v", proto, fromWS, err)
					}
					// The turn ran in a's Codex (b's has no such thread).
					s := b.waitSession(ws, sid, "the turn sent over "+proto+" done", func(s sessionView) bool {
						last := s.Turns[len(s.Turns)-1]
						return idle(s) && last.ID == r.Data.SendMessage.ID
					})
					if m := s.Turns[len(s.Turns)-1].Messages; len(m) < 2 || m[len(m)-1].Text != "reply: over "+proto {
						t.Errorf("the turn sent over %s has messages %+v", proto, m)
					}
				},
			},
			{
				name:      "forkSession",
				query:     `mutation($ws: ID!, $id: ID!, $req: ID!) { forkSession(input: {workspaceId: $ws, agentSessionId: $id, requestId: $req}) { session { id instanceId } } }`,
				vars:      map[string]any{"ws": ws, "id": sid, "req": "ws-fork-" + proto},
				forwarded: true,
				check: func(t *testing.T, fromWS []byte) {
					var r struct {
						Data struct {
							ForkSession struct {
								Session struct{ ID, InstanceID string }
							}
						}
						Errors []gqlErr
					}
					if err := json.Unmarshal(fromWS, &r); err != nil || len(r.Errors) > 0 || r.Data.ForkSession.Session.ID == "" {
						t.Fatalf("forkSession over %s: %s %v", proto, fromWS, err)
					}
					if got := r.Data.ForkSession.Session.InstanceID; got != "a" {
						t.Errorf("the child's instanceId = %q, want a (the parent's owner)", got)
					}
					// The same request over HTTP POST to the owner replays it:
					// the same answer, byte for byte.
					if _, fromA := a.raw(`mutation($ws: ID!, $id: ID!, $req: ID!) { forkSession(input: {workspaceId: $ws, agentSessionId: $id, requestId: $req}) { session { id instanceId } } }`,
						map[string]any{"ws": ws, "id": sid, "req": "ws-fork-" + proto}); !bytes.Equal(fromA, fromWS) {
						t.Errorf("over %s to b: %s; over HTTP to a: %s", proto, fromWS, fromA)
					}
				},
			},
			{
				name:      "respondToApproval, unknown approval",
				query:     `mutation($ws: ID!, $id: ID!) { respondToApproval(input: {workspaceId: $ws, agentSessionId: $id, approvalId: "no-such-approval", decision: DECLINE}) { id } }`,
				vars:      vars,
				forwarded: true,
				check: func(t *testing.T, fromWS []byte) {
					compareWithHTTP(t, a, b, fromWS, `mutation($ws: ID!, $id: ID!) { respondToApproval(input: {workspaceId: $ws, agentSessionId: $id, approvalId: "no-such-approval", decision: DECLINE}) { id } }`, vars)
				},
			},
			{
				name:      "steerTurn, unknown turn",
				query:     `mutation($ws: ID!, $id: ID!) { steerTurn(input: {workspaceId: $ws, agentSessionId: $id, turnId: "no-such-turn", text: "x"}) { id } }`,
				vars:      vars,
				forwarded: true,
				check: func(t *testing.T, fromWS []byte) {
					compareWithHTTP(t, a, b, fromWS, `mutation($ws: ID!, $id: ID!) { steerTurn(input: {workspaceId: $ws, agentSessionId: $id, turnId: "no-such-turn", text: "x"}) { id } }`, vars)
				},
			},
			{
				// Reads are answered from the shared database where they arrive.
				name:  "query",
				query: `query($ws: ID!, $id: ID!) { session(workspaceId: $ws, id: $id) { id instanceId } }`,
				vars:  vars,
				check: func(t *testing.T, fromWS []byte) {
					want := fmt.Sprintf(`{"data":{"session":{"id":%q,"instanceId":"a"}}}`, sid)
					if string(fromWS) != want {
						t.Errorf("query over %s to b: %s, want %s", proto, fromWS, want)
					}
				},
			},
		}
		for _, tc := range cases {
			t.Run(proto+"/"+tc.name, func(t *testing.T) {
				before := b.forwards()
				fromWS, err := b.wsOperation(proto, nil, tc.query, tc.vars)
				if err != nil {
					t.Fatalf("over %s to b: %v", proto, err)
				}
				want := before
				if tc.forwarded {
					want++
				}
				if got := b.awaitForwards(want); got != want {
					t.Errorf("b forwarded %d commands, want %d", got-before, want-before)
				}
				tc.check(t, fromWS)
			})
		}
	}

	// An upgrade marked as forwarded by another instance (with the token):
	// b does not forward it again.
	t.Run("forwarded already", func(t *testing.T) {
		h := http.Header{}
		h.Set("Authorization", "Bearer "+testToken)
		h.Set(forward.Header, "c")
		before := b.forwards()
		fromWS, err := b.wsOperation("graphql-transport-ws", h,
			`mutation($ws: ID!, $id: ID!) { sendMessage(input: {workspaceId: $ws, agentSessionId: $id, text: "again"}) { id } }`, vars)
		if err != nil {
			t.Fatal(err)
		}
		errs := wsErrors(t, fromWS)
		if len(errs) != 1 || errs[0].code() != "agent.session_unavailable" || !strings.Contains(errs[0].Message, "not forwarded again") {
			t.Errorf("a forwarded command over a WebSocket: %s, want agent.session_unavailable", fromWS)
		}
		if got := b.forwards(); got != before {
			t.Errorf("b forwarded it (%d commands)", got-before)
		}
	})

	// The owner gone, then down: agent.session_unavailable naming it, over
	// either subprotocol.
	a.kill()
	send := `mutation($ws: ID!, $id: ID!) { sendMessage(input: {workspaceId: $ws, agentSessionId: $id, text: "while a is away"}) { id } }`
	for _, proto := range []string{"graphql-transport-ws", "graphql-ws"} {
		fromWS, err := b.wsOperation(proto, nil, send, vars)
		if err != nil {
			t.Fatalf("over %s: %v", proto, err)
		}
		if errs := wsErrors(t, fromWS); len(errs) != 1 || errs[0].code() != "agent.session_unavailable" || !strings.Contains(errs[0].Message, `"a"`) {
			t.Errorf("over %s while a is gone: %s, want agent.session_unavailable naming a", proto, fromWS)
		}
	}
	deadline := time.Now().Add(instance.DownAfter + 2*instance.HeartbeatEvery)
	for {
		fromWS, err := b.wsOperation("graphql-transport-ws", nil, send, vars)
		if err != nil {
			t.Fatal(err)
		}
		errs := wsErrors(t, fromWS)
		if len(errs) == 1 && errs[0].code() == "agent.session_unavailable" && strings.Contains(errs[0].Message, "down") {
			// The same answer as over HTTP POST, but for the heartbeat's age.
			if _, fromHTTP := b.raw(send, vars); !strings.Contains(string(fromHTTP), `"code":"agent.session_unavailable"`) {
				t.Errorf("over HTTP while a is down: %s", fromHTTP)
			}
			if !strings.Contains(errs[0].Message, `"a"`) {
				t.Errorf("message %q does not name a", errs[0].Message)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a not taken for down over the WebSocket: %s", fromWS)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// compareWithHTTP: a WebSocket result from b is, byte for byte, what the
// same operation answers over HTTP POST on the owner a and on b, and it
// carries an error code.
func compareWithHTTP(t *testing.T, a, b *proc, fromWS []byte, query string, vars map[string]any) {
	t.Helper()
	_, fromA := a.raw(query, vars)
	n := b.forwards()
	_, fromB := b.raw(query, vars)
	b.awaitForwards(n + 1) // before the next case counts
	if !bytes.Equal(fromWS, fromA) || !bytes.Equal(fromWS, fromB) {
		t.Errorf("over the WebSocket to b: %s\nover HTTP to a: %s\nover HTTP to b: %s", fromWS, fromA, fromB)
	}
	t.Logf("answer over the WebSocket to b: %s", fromWS)
	if errs := wsErrors(t, fromWS); len(errs) == 0 || errs[0].code() == "" {
		t.Errorf("result %s has no error code", fromWS)
	}
}
