package session

import (
	"context"
	"encoding/json"
	"testing"

	"tuttid/agent"
	"tuttid/store/storetest"
)

// An update returns the row as stored without reading it back: what it
// returns must be what a read finds, for the fields the provider filled in
// and for those it left alone.
func TestUpsertReturnsTheStoredRow(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.st.Workspace(storetest.Workspace{ID: "w"})
	a := e.st.Session(storetest.Session{ID: "s", Workspace: "w"})
	started := agent.RuntimeMessage{ID: "i1", TurnID: "t1", Role: "assistant", Kind: "agentMessage",
		Status: "in_progress", Content: json.RawMessage(`{"type":"agentMessage","text":""}`)}
	e.upsert(t, a, started)
	for _, m := range []agent.RuntimeMessage{
		{ID: "i1", Kind: "agentMessage", Text: "done", Status: "completed",
			Content: json.RawMessage(`{"type":"agentMessage","text":"done"}`)},
		{ID: "i1", Kind: "agentMessage", Text: "kept content"}, // no role, status, turn, content
	} {
		got, added := e.upsert(t, a, m)
		if added {
			t.Fatal("an update reported as added")
		}
		stored, err := e.st.Client.Message.Get(context.Background(), got.ID)
		if err != nil {
			t.Fatal(err)
		}
		if s, g := stored.String(), got.Unwrap().String(); s != g {
			t.Errorf("returned row differs from the stored one:\nstored   %s\nreturned %s", s, g)
		}
		if string(got.Content) != string(stored.Content) {
			t.Errorf("content %s, stored %s", got.Content, stored.Content)
		}
	}
}
