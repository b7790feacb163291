package session

import (
	"context"
	"testing"

	"tuttid/agent"
	"tuttid/ent/agentsession"
	"tuttid/ent/message"
	"tuttid/ent/turn"
	"tuttid/store/storetest"
)

// Several instances share the database: a start settles what its own
// instance left running (its Codex died with it) and leaves another
// instance's running turns, items and sessions as they are.
func TestReconcileSettlesOnlyItsOwnInstance(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	svc := New(Config{Store: st.Store, InstanceID: "a"})
	st.Workspace(storetest.Workspace{ID: "w"})
	running := func(id string) storetest.Session {
		return storetest.Session{ID: id, Workspace: "w", Status: agentsession.StatusWORKING,
			Turns: []storetest.Turn{{ID: "t-" + id, Status: turn.StatusIN_PROGRESS,
				Messages: []storetest.Message{{ID: "m-" + id, Role: "assistant", Status: agent.ItemInProgress}}}}}
	}
	st.Sessions(running("mine"), running("theirs"))
	for id, owner := range map[string]string{"mine": "a", "theirs": "b"} {
		if err := st.Client.AgentSession.UpdateOneID(id).SetInstanceID(owner).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := svc.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id      string
		session agentsession.Status
		turn    turn.Status
		item    string
	}{
		{"mine", agentsession.StatusREADY, turn.StatusFAILED, agent.ItemFailed},
		{"theirs", agentsession.StatusWORKING, turn.StatusIN_PROGRESS, agent.ItemInProgress},
	} {
		a := st.Client.AgentSession.GetX(ctx, tc.id)
		tr := st.Client.Turn.Query().Where(turn.TurnID("t-" + tc.id)).OnlyX(ctx)
		m := st.Client.Message.Query().Where(message.AgentSessionID(tc.id)).OnlyX(ctx)
		if a.Status != tc.session || tr.Status != tc.turn || m.Status != tc.item {
			t.Errorf("%s after a's start: session %s, turn %s, item %s; want %s, %s, %s",
				tc.id, a.Status, tr.Status, m.Status, tc.session, tc.turn, tc.item)
		}
	}
}
