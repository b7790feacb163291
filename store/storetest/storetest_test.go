package storetest_test

import (
	"context"
	"fmt"
	"testing"

	"tuttid/agent"
	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/ent/message"
	"tuttid/ent/turn"
	"tuttid/store/storetest"
)

func TestSeedDefaultsAndVersions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.New(t)
	db.Workspace(storetest.Workspace{ID: "ws"})
	a := db.Session(storetest.Session{ID: "s", Workspace: "ws", Turns: []storetest.Turn{
		{ID: "t1", Messages: []storetest.Message{{Role: "user", Text: "q"}, {Role: "assistant", Text: "a"}}},
		{ID: "t2", Status: turn.StatusIN_PROGRESS},
	}})
	if a.Provider != agent.ProviderCodex || a.ProviderSessionID != "thread-s" || a.Status != agentsession.StatusREADY ||
		!a.Visible || !a.CreatedAt.Equal(storetest.SeedTime()) || a.LastMessageVersion != 2 {
		t.Errorf("session %+v", a)
	}
	db.Turns("s", storetest.Turn{ID: "t3", Messages: []storetest.Message{{ID: "x", Role: "assistant"}}})
	msgs, err := db.Client.Message.Query().Where(message.AgentSessionID("s")).Order(ent.Asc(message.FieldVersion)).All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range msgs {
		got = append(got, fmt.Sprintf("%s/%s/%d/%s", m.TurnID, m.MessageID, m.Version, m.Status))
	}
	if want := "[t1/t1-m1/1/completed t1/t1-m2/2/completed t3/x/3/completed]"; fmt.Sprint(got) != want {
		t.Errorf("messages %v, want %s", got, want)
	}
	turns, err := db.Client.Turn.Query().Where(turn.AgentSessionID("s")).Order(ent.Asc(turn.FieldStartedAt), ent.Asc(turn.FieldTurnID)).All(ctx)
	if err != nil || len(turns) != 3 || turns[0].Status != turn.StatusCOMPLETED || turns[1].Status != turn.StatusIN_PROGRESS {
		t.Errorf("turns %v, %v", turns, err)
	}
	if a, _ := db.Client.AgentSession.Get(ctx, "s"); a.LastMessageVersion != 3 {
		t.Errorf("last message version %d after Turns, want 3", a.LastMessageVersion)
	}

	if a := db.Session(storetest.Session{ID: "n", Workspace: "ws", Thread: "ignored", NoThread: true}); a.ProviderSessionID != "" {
		t.Errorf("NoThread session has thread %q, want none", a.ProviderSessionID)
	}

	db.Session(storetest.Session{ID: "c", Workspace: "ws"})
	f := db.Forks(storetest.Fork{Workspace: "ws", Parent: "s", Child: "c", TurnID: "t1", At: 7})
	if len(f) != 1 || f[0].ForkRequestID != "req-c" || f[0].ParentProviderSessionID != "thread-s" || f[0].ChildProviderSessionID != "thread-c" {
		t.Errorf("fork %+v", f)
	}
}

func TestCounting(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	st, count := db.Counting()
	db.Workspace(storetest.Workspace{ID: "ws"}) // through the plain client: not counted
	if n := count.N(); n != 0 {
		t.Fatalf("%d statements counted from the plain client", n)
	}
	n := count.Count(func() {
		if _, err := st.Client.Workspace.Query().All(context.Background()); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Client.Workspace.Update().SetName("w").Save(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
	if n != 2 || len(count.Statements()) != 2 {
		t.Errorf("counted %d (%q), want a query and an exec", n, count.Statements())
	}
	if got := count.Reset(); got != 2 || count.N() != 0 || len(count.Statements()) != 0 {
		t.Errorf("Reset returned %d, then N %d", got, count.N())
	}
}

func TestExchanges(t *testing.T) {
	t.Parallel()
	turns := storetest.Exchanges("s", 2)
	if len(turns) != 2 || turns[1].ID != "s-t2" || len(turns[1].Messages) != 2 {
		t.Fatalf("%+v", turns)
	}
	u, a := turns[1].Messages[0], turns[1].Messages[1]
	if u.ID != "s-t2-u" || u.Role != "user" || u.Text != "s q2" || string(u.Content) != `{"type":"userMessage"}` ||
		a.ID != "s-t2-a" || a.Role != "assistant" || a.Text != "s a2" || a.Content != nil {
		t.Errorf("messages %+v", turns[1].Messages)
	}
}
