package graph_test

import (
	"strings"
	"testing"

	"tuttid/activity"
)

func TestActivitySubscription(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.workspace("ws")
	a := e.session("ws", "s", "S", 0, 0)

	sub := e.c.Websocket(`subscription { activity(workspaceId: "ws") { kind seq workspaceId agentSessionId session { id } delta messageId deltaKind } }`)
	defer sub.Close()
	type event struct {
		Activity struct {
			Kind, WorkspaceID, AgentSessionID string
			Seq                               int64
			Session                           *struct{ ID string }
			Delta, MessageID, DeltaKind       *string
		}
	}
	next := func() event {
		t.Helper()
		var ev event
		if err := sub.Next(&ev); err != nil {
			t.Fatalf("next event: %v", err)
		}
		return ev
	}
	// SUBSCRIBED first: from then on nothing published is missed.
	if f := next().Activity; f.Kind != "SUBSCRIBED" || f.WorkspaceID != "ws" {
		t.Fatalf("first event %+v, want SUBSCRIBED", f)
	}
	e.broker.Publish(e.ctx, activity.Event{Kind: activity.SessionUpdated, WorkspaceID: "ws", AgentSessionID: a.ID, Session: a})
	if f := next().Activity; f.Kind != "SESSION_UPDATED" || f.WorkspaceID != "ws" || f.AgentSessionID != "s" || f.Session == nil || f.Session.ID != "s" ||
		f.Delta != nil || f.MessageID != nil || f.DeltaKind != nil || f.Seq == 0 {
		t.Errorf("session event %+v", f)
	}
	e.broker.Publish(e.ctx, activity.Event{Kind: activity.MessageDelta, WorkspaceID: "ws", AgentSessionID: "s", Delta: "he", ItemID: "m1", DeltaKind: "agentMessage"})
	if f := next().Activity; f.Kind != "MESSAGE_DELTA" || f.Delta == nil || *f.Delta != "he" || f.MessageID == nil || *f.MessageID != "m1" ||
		f.DeltaKind == nil || *f.DeltaKind != "agentMessage" || f.Session != nil {
		t.Errorf("delta event %+v", f)
	}
}

func TestActivitySubscriptionRejects(t *testing.T) {
	t.Parallel()
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
