package session

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"tuttid/agent"
	"tuttid/ent"
	"tuttid/ent/message"
	"tuttid/paging"
	"tuttid/store/storetest"
)

func TestVersionsPerSession(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.st.Workspace(storetest.Workspace{ID: "w"})
	ctx := context.Background()
	a := e.st.Session(storetest.Session{ID: "a", Workspace: "w"})
	b := e.st.Session(storetest.Session{ID: "b", Workspace: "w"})

	first := e.history(t, a, "m", 3)
	if got := versions(first); !slices.Equal(got, []int64{1, 2, 3}) {
		t.Fatalf("first history of a: versions %v, want 1..3", got)
	}
	// The same item ids in another session (a fork child keeps its
	// parent's ids) start over at 1.
	other := e.history(t, b, "m", 2)
	if got := versions(other); !slices.Equal(got, []int64{1, 2}) {
		t.Fatalf("b: versions %v, want 1, 2", got)
	}
	// More history and single items continue where the session left off.
	more := e.insert(t, a, msg("x1", "user", "x1"), msg("x2", "assistant", "x2"))
	if got := versions(more); !slices.Equal(got, []int64{4, 5}) {
		t.Fatalf("second history of a: versions %v, want 4, 5", got)
	}
	m, added := e.upsert(t, a, msg("y", "user", "y"))
	if !added || m.Version != 6 {
		t.Fatalf("new item of a: added=%v version=%d, want true, 6", added, m.Version)
	}
	m, added = e.upsert(t, b, msg("y", "user", "y"))
	if !added || m.Version != 3 {
		t.Fatalf("new item of b: added=%v version=%d, want true, 3", added, m.Version)
	}

	for _, tc := range []struct {
		a    *ent.AgentSession
		want []int64
	}{{a, []int64{1, 2, 3, 4, 5, 6}}, {b, []int64{1, 2, 3}}} {
		p, err := e.reads().Messages(ctx, tc.a.ID, paging.Args{})
		if err != nil {
			t.Fatal(err)
		}
		if got := versions(p.Nodes); !slices.Equal(got, tc.want) {
			t.Errorf("%s: versions %v, want %v", tc.a.ID, got, tc.want)
		}
		s := e.st.Client.AgentSession.GetX(ctx, tc.a.ID)
		if s.LastMessageVersion != tc.want[len(tc.want)-1] {
			t.Errorf("%s: last_message_version = %d, want %d", tc.a.ID, s.LastMessageVersion, tc.want[len(tc.want)-1])
		}
	}
}

func TestInsertHistoryKeepsOrderAndFields(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.st.Workspace(storetest.Workspace{ID: "w"})
	a := e.st.Session(storetest.Session{ID: "a", Workspace: "w"})
	saved := e.insert(t, a,
		agent.RuntimeMessage{ID: "i1", TurnID: "t1", Role: "user", Kind: "userMessage", Text: "hi",
			Content: json.RawMessage(`{"type":"userMessage"}`), Status: "completed"},
		agent.RuntimeMessage{ID: "i2", TurnID: "t1"}, // defaults
		agent.RuntimeMessage{ID: "i3", TurnID: "t1", Role: "tool", Content: json.RawMessage(`not json`)},
	)
	if got := versions(saved); !slices.Equal(got, []int64{1, 2, 3}) {
		t.Fatalf("versions %v", got)
	}
	ms := e.st.Client.Message.Query().Where(message.AgentSessionID(a.ID)).Order(ent.Asc(message.FieldVersion)).AllX(context.Background())
	if len(ms) != 3 {
		t.Fatalf("%d messages stored", len(ms))
	}
	if m := ms[0]; m.MessageID != "i1" || m.WorkspaceID != "w" || m.Role != "user" || m.Text != "hi" || string(m.Content) != `{"type":"userMessage"}` {
		t.Errorf("first message = %+v", m)
	}
	if m := ms[1]; m.Role != "unknown" || m.Status != "completed" || string(m.Content) != `{}` {
		t.Errorf("defaults: role %q status %q content %s", m.Role, m.Status, m.Content)
	}
	if m := ms[2]; string(m.Content) != `{}` {
		t.Errorf("invalid JSON content stored as %s, want {}", m.Content)
	}
	if got, err := InsertHistory(context.Background(), nil, a, nil, e.svc.now()); err != nil || got != 0 {
		t.Errorf("empty history: %v, %v", got, err)
	}
}

func TestUpsertKeepsVersion(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.st.Workspace(storetest.Workspace{ID: "w"})
	ctx := context.Background()
	a := e.st.Session(storetest.Session{ID: "a", Workspace: "w"})
	e.history(t, a, "m", 3)

	started, added := e.upsert(t, a, agent.RuntimeMessage{
		ID: "item", TurnID: "t9", Role: "assistant", Kind: "agentMessage", Text: "Hel",
		Content: json.RawMessage(`{"text":"Hel"}`), Status: "in_progress",
	})
	if !added || started.Version != 4 {
		t.Fatalf("new item: added=%v version=%d, want true, 4", added, started.Version)
	}
	e.upsert(t, a, msg("later", "user", "next"))

	done, added := e.upsert(t, a, agent.RuntimeMessage{
		ID: "item", Role: "assistant", Kind: "agentMessage", Text: "Hello",
		Content: json.RawMessage(`{"text":"Hello"}`), Status: "completed",
	})
	if added {
		t.Fatal("known item reported as new")
	}
	if done.Version != 4 {
		t.Fatalf("updated item moved to version %d, want 4", done.Version)
	}
	if done.ID != started.ID {
		t.Fatalf("update created row %d, want row %d updated", done.ID, started.ID)
	}
	if done.Text != "Hello" || done.Status != "completed" || string(done.Content) != `{"text":"Hello"}` {
		t.Fatalf("updated item = %+v", done)
	}
	if done.TurnID != "t9" {
		t.Fatalf("an update without a turn id changed turn_id to %q", done.TurnID)
	}
	if n := e.st.Client.Message.Query().Where(message.AgentSessionID(a.ID), message.MessageID("item")).CountX(ctx); n != 1 {
		t.Fatalf("%d rows for the item, want 1", n)
	}
	if s := e.st.Client.AgentSession.GetX(ctx, a.ID); s.LastMessageVersion != 5 {
		t.Fatalf("last_message_version = %d, want 5 (the update reserved none)", s.LastMessageVersion)
	}
	// A cursor taken before the update still finds the rest of the list.
	p, err := e.reads().Messages(ctx, a.ID, paging.Args{First: intp(10), After: strp(paging.Cursor("m", 3))})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range p.Nodes {
		got = append(got, m.MessageID)
	}
	if !slices.Equal(got, []string{"item", "later"}) {
		t.Fatalf("messages after version 3 = %v, want item, later", got)
	}
}
