package server_test

import (
	"slices"
	"testing"
)

// TestSessionTurnsOnRealCodex: a client creates a session, sends two
// messages, sees both turns complete with the assistant's replies stored,
// and the model receives the first turn's history with the second.
func TestSessionTurnsOnRealCodex(t *testing.T) {
	h := startServer(t, harnessOpts{})
	ws := h.createWorkspace("demo")
	s := h.startSession(ws, "Build login")
	if s.ProviderSessionID == "" || s.Status != "READY" {
		t.Fatalf("started session = %+v", s)
	}
	h.send(ws, s.ID, "first message")
	h.send(ws, s.ID, "second message")

	got := h.session(ws, s.ID)
	if len(got.Turns) != 2 {
		t.Fatalf("turns = %+v", got.Turns)
	}
	for i, want := range []string{"first message", "second message"} {
		var user, assistant string
		for _, m := range got.Turns[i].Messages {
			switch m.Role {
			case "user":
				user = m.Text
			case "assistant":
				assistant = m.Text
			}
		}
		if user != want || assistant != "reply: "+want {
			t.Errorf("turn %d: user %q assistant %q", i, user, assistant)
		}
	}
	reqs := h.model.RequestsFor(s.ProviderSessionID)
	if len(reqs) != 2 {
		t.Fatalf("model saw %d requests for the thread", len(reqs))
	}
	if texts := reqs[1].UserTexts(); !slices.Equal(texts, []string{"first message", "second message"}) {
		t.Errorf("second request user texts = %q", texts)
	}
}
