package graph_test

import (
	"strings"
	"testing"
	"time"

	"tuttid/activity"
)

func TestActivitySubscription(t *testing.T) {
	e := newEnv(t, nil)
	e.workspace("ws")
	a := e.session("ws", "s", "S", 0)

	sub := e.c.Websocket(`subscription { activity(workspaceId: "ws") { kind seq workspaceId agentSessionId session { id } delta messageId } }`)
	defer sub.Close()
	type event struct {
		Activity struct {
			Kind, WorkspaceID, AgentSessionID string
			Seq                               int64
			Session                           *struct{ ID string }
			Delta, MessageID                  *string
		}
	}
	// The subscription is registered once the server has answered the
	// start; publish until the first event arrives.
	got := make(chan event, 4)
	go func() {
		for {
			var ev event
			if err := sub.Next(&ev); err != nil {
				close(got)
				return
			}
			got <- ev
		}
	}()
	deadline := time.After(10 * time.Second)
	var first event
	for first.Activity.Kind == "" {
		e.broker.Publish(e.ctx, activity.Event{Kind: activity.SessionUpdated, WorkspaceID: "ws", AgentSessionID: a.ID, Session: a})
		select {
		case first = <-got:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			t.Fatal("no event")
		}
	}
	if f := first.Activity; f.Kind != "SESSION_UPDATED" || f.WorkspaceID != "ws" || f.AgentSessionID != "s" || f.Session == nil || f.Session.ID != "s" ||
		f.Delta != nil || f.MessageID != nil || f.Seq == 0 {
		t.Errorf("first event %+v", f)
	}
	// Drain repeats of the first, then a delta.
	e.broker.Publish(e.ctx, activity.Event{Kind: activity.MessageDelta, WorkspaceID: "ws", AgentSessionID: "s", Delta: "he", ItemID: "m1"})
	for {
		select {
		case ev, ok := <-got:
			if !ok {
				t.Fatal("subscription ended")
			}
			if ev.Activity.Kind == "SESSION_UPDATED" {
				continue
			}
			if f := ev.Activity; f.Kind != "MESSAGE_DELTA" || f.Delta == nil || *f.Delta != "he" || f.MessageID == nil || *f.MessageID != "m1" || f.Session != nil {
				t.Errorf("delta event %+v", f)
			}
			return
		case <-deadline:
			t.Fatal("no delta event")
		}
	}
}

func TestActivitySubscriptionRejects(t *testing.T) {
	e := newEnv(t, nil)
	e.workspace("ws")
	cases := []struct {
		query, want string
	}{
		{`subscription { activity(workspaceId: "nope") { seq } }`, "agent.workspace_not_found"},
		{`subscription { activity(workspaceId: "ws", agentSessionId: "nope") { seq } }`, "agent.session_not_found"},
		{`subscription { activity(workspaceId: "ws", afterSeq: 99) { seq } }`, "activity.resync_required"},
	}
	for _, c := range cases {
		sub := e.c.Websocket(c.query)
		var ev map[string]any
		err := sub.Next(&ev)
		sub.Close()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %s", c.query, err, c.want)
		}
	}
}
