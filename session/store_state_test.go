package session

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"tuttid/activity"
	"tuttid/activity/activitytest"
	"tuttid/agent"
	"tuttid/ent/agentsession"
	"tuttid/ent/message"
	"tuttid/ent/turn"
	"tuttid/store"
	"tuttid/store/storetest"
)

// checking returns a recorder that reads the store the moment an event is
// published, as a client querying on receipt would, and a func listing
// what it found wrong.
func checking(st *store.Store) (*activitytest.Recorder, func() []string) {
	var mu sync.Mutex
	var problems []string
	rec := &activitytest.Recorder{Inspect: func(ctx context.Context, e activity.Event) {
		if problem := checkPublished(ctx, st, e); problem != "" {
			mu.Lock()
			defer mu.Unlock()
			problems = append(problems, fmt.Sprintf("%s: %s", e.Kind, problem))
		}
	}}
	return rec, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(problems)
	}
}

func checkPublished(ctx context.Context, st *store.Store, e activity.Event) string {
	a, err := st.Client.AgentSession.Get(ctx, e.AgentSessionID)
	if err != nil {
		return fmt.Sprintf("session not readable: %v", err)
	}
	switch e.Kind {
	case activity.SessionUpdated:
		if e.Session == nil || e.Session.Status != a.Status {
			return fmt.Sprintf("event says %v, the store %s", e.Session, a.Status)
		}
	case activity.TurnStarted, activity.TurnCompleted:
		t, err := st.Client.Turn.Query().Where(turn.AgentSessionID(a.ID), turn.TurnID(e.Turn.TurnID)).Only(ctx)
		if err != nil {
			return fmt.Sprintf("turn not readable: %v", err)
		}
		if t.Status != e.Turn.Status {
			return fmt.Sprintf("event's turn is %s, the store's %s", e.Turn.Status, t.Status)
		}
		want := agentsession.StatusWORKING
		if e.Kind == activity.TurnCompleted {
			want = agentsession.StatusREADY
			open, err := st.Client.Message.Query().
				Where(message.AgentSessionID(a.ID), message.TurnID(t.TurnID), message.Status("in_progress")).Count(ctx)
			if err != nil || (t.Status != turn.StatusCOMPLETED && open != 0) {
				return fmt.Sprintf("%d items of the ended turn still in progress (%v)", open, err)
			}
		}
		if a.Status != want {
			return fmt.Sprintf("session is %s, want %s", a.Status, want)
		}
	case activity.MessageAdded, activity.MessageUpdated:
		m, err := st.Client.Message.Query().Where(message.AgentSessionID(a.ID), message.MessageID(e.Message.MessageID)).Only(ctx)
		if err != nil {
			return fmt.Sprintf("message not readable: %v", err)
		}
		if m.Text != e.Message.Text || m.Status != e.Message.Status {
			return fmt.Sprintf("event's message %q %s, the store's %q %s", e.Message.Text, e.Message.Status, m.Text, m.Status)
		}
	}
	return ""
}

// TestIngestPublishesAfterCommit: each event of a turn, in Codex's order,
// is published once what it implies is committed: on TURN_STARTED the
// session is WORKING; on TURN_COMPLETED it is READY (so a client may send
// the next message at once) and the ended turn's items are closed; a
// MESSAGE_ADDED's message is readable; a SESSION_UPDATED's status is the
// stored one. TURN_COMPLETED comes before the SESSION_UPDATED READY.
func TestIngestPublishesAfterCommit(t *testing.T) {
	t.Parallel()
	for _, end := range []agent.TurnStatus{agent.TurnCompleted, agent.TurnInterrupted, agent.TurnFailed} {
		t.Run(string(end), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.New(t)
			pub, problems := checking(st.Store)
			svc := New(Config{Store: st.Store, Publisher: pub})
			st.Workspace(storetest.Workspace{ID: "w"})
			st.Session(storetest.Session{ID: "s1", Workspace: "w", Thread: "thread-1"})
			for _, e := range []agent.Event{
				{Kind: agent.EventThreadStatus, Status: string(agent.ThreadActive)},
				{Kind: agent.EventTurnStarted},
				{Kind: agent.EventItemStarted, Message: &agent.RuntimeMessage{ID: "user-1", TurnID: "turn-1", Role: "user", Text: "hi", Status: "completed"}},
				{Kind: agent.EventItemStarted, Message: &agent.RuntimeMessage{ID: "cmd-1", TurnID: "turn-1", Role: "tool", Status: "in_progress"}},
				{Kind: agent.EventItemCompleted, Message: &agent.RuntimeMessage{ID: "user-1", TurnID: "turn-1", Role: "user", Text: "hi!", Status: "completed"}},
				{Kind: agent.EventThreadStatus, Status: string(agent.ThreadIdle)},
				{Kind: agent.EventTurnCompleted, Status: string(end)},
			} {
				e.Provider, e.ThreadID, e.TurnID = agent.ProviderCodex, "thread-1", "turn-1"
				if err := svc.HandleEvent(ctx, e); err != nil {
					t.Fatalf("%s: %v", e.Kind, err)
				}
			}
			for _, p := range problems() {
				t.Error(p)
			}
			want := []activity.Kind{activity.SessionUpdated, activity.TurnStarted, activity.MessageAdded,
				activity.MessageAdded, activity.MessageUpdated, activity.TurnCompleted, activity.SessionUpdated}
			if got := pub.Kinds(); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("published %v, want %v", got, want)
			}
		})
	}
}

// TestSetStatusReadsTheStore: a status change is decided on the stored
// status, not on the caller's (possibly stale) copy of the session.
func TestSetStatusReadsTheStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newTestEnv(t)
	pub, problems := checking(e.st.Store)
	e.svc.changes.pub = pub
	e.st.Workspace(storetest.Workspace{ID: "w"})
	stale := e.st.Session(storetest.Session{ID: "s1", Workspace: "w"}) // READY
	if err := e.st.Client.AgentSession.UpdateOneID("s1").SetStatus(agentsession.StatusWORKING).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.setStatus(ctx, stale, agentsession.StatusREADY); err != nil {
		t.Fatal(err)
	}
	got, err := e.st.Client.AgentSession.Get(ctx, "s1")
	if err != nil || got.Status != agentsession.StatusREADY {
		t.Fatalf("status %v (%v), want READY", got, err)
	}
	if err := e.svc.setStatus(ctx, got, agentsession.StatusREADY); err != nil {
		t.Fatal(err)
	}
	if kinds, problems := pub.Kinds(), problems(); fmt.Sprint(kinds) != fmt.Sprint([]activity.Kind{activity.SessionUpdated}) || len(problems) > 0 {
		t.Fatalf("published %v (problems %v), want one SESSION_UPDATED", kinds, problems)
	}
}
