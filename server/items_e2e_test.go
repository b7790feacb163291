package server_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"tuttid/codex/codextest"
)

// Every item Codex produces is kept as a Message with its whole typed
// content, and command output streams as MESSAGE_DELTA like text does.
func TestItemsKeptWithContentE2E(t *testing.T) {
	h := startServer(t, harnessOpts{})
	h.model.SetReply(func(r codextest.Request) codextest.Reply {
		if len(r.FunctionCallOutputs()) > 0 {
			return codextest.Reply{Text: "done"}
		}
		// Codex streams what a command prints after its first output
		// poll (verified on 0.169.0), hence the pause.
		return codextest.Reply{FunctionCall: &codextest.FunctionCall{Cmd: "echo start; sleep 0.5; echo items-out-5150"}}
	})
	ws := h.createWorkspace("w")
	sub := h.ws(protoTransportWS).subscribe(`subscription($ws: ID!, $after: Int64) {
	  activity(workspaceId: $ws, afterSeq: $after) { kind delta messageId deltaKind turn { id status } } }`,
		map[string]any{"ws": ws, "after": h.publishMarker(ws)})
	s := h.startSession(ws, "items")
	turnID := h.send(ws, s.ID, "run")

	var out struct {
		Session struct {
			Messages struct {
				Edges []struct {
					Node struct {
						ID, Role, Kind, Text, Status, TurnID string
						Content                              map[string]any
					}
				}
			}
		}
	}
	h.must(`query($ws: ID!, $id: ID!) { session(workspaceId: $ws, id: $id) {
	  messages(first: 50) { edges { node { id role kind text status turnId content } } } } }`,
		map[string]any{"ws": ws, "id": s.ID}, &out)
	kinds := map[string]bool{}
	var cmdID string
	for _, e := range out.Session.Messages.Edges {
		n := e.Node
		kinds[n.Kind] = true
		if n.Content["type"] != n.Kind || n.Content["id"] != n.ID || n.TurnID != turnID || n.Role == "" {
			t.Errorf("message %+v: content does not hold the typed item", n)
		}
		if n.Kind == "commandExecution" {
			cmdID = n.ID
			if out, _ := n.Content["aggregatedOutput"].(string); !strings.Contains(out, "items-out-5150") ||
				!strings.Contains(n.Text, "echo items-out-5150") || n.Status != "completed" {
				t.Errorf("command message = %+v", n)
			}
		}
	}
	for _, k := range []string{"userMessage", "commandExecution", "agentMessage"} {
		if !kinds[k] {
			t.Errorf("no %s message; got %v", k, kinds)
		}
	}

	// The command's output streamed as deltas of its message.
	var streamed strings.Builder
	for {
		r, ok, timedOut := sub.next(20 * time.Second)
		if !ok || timedOut {
			t.Fatalf("subscription ended or timed out; streamed %q", streamed.String())
		}
		var ev struct {
			Activity struct {
				Kind, Delta, MessageID, DeltaKind string
				Turn                              *struct{ ID, Status string }
			}
		}
		_ = json.Unmarshal(r.Data, &ev)
		a := ev.Activity
		if a.Kind == "MESSAGE_DELTA" && a.DeltaKind == "commandExecution" && a.MessageID == cmdID {
			streamed.WriteString(a.Delta)
		}
		if a.Kind == "TURN_COMPLETED" && a.Turn != nil && a.Turn.ID == turnID {
			break
		}
	}
	if !strings.Contains(streamed.String(), "items-out-5150") {
		t.Fatalf("command output deltas = %q", streamed.String())
	}
}
