package sessionread_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"tuttid/agent"
	"tuttid/ent"
	"tuttid/ent/message"
	"tuttid/session"
	"tuttid/sessionread"
	"tuttid/store/storetest"
)

// testEnv is a Reader over a real database file (storetest); messages are
// stored as package session stores them.
type testEnv struct {
	st  *storetest.Store
	svc *sessionread.Reader
}

func newTestEnv(t *testing.T) *testEnv {
	t.Helper()
	st := storetest.New(t)
	return &testEnv{st: st, svc: sessionread.New(sessionread.Config{Store: st.Store})}
}

// history stores n messages m1..mn (user and assistant in turn) as one
// history with InsertHistory.
func (e *testEnv) history(t *testing.T, a *ent.AgentSession, prefix string, n int) []*ent.Message {
	t.Helper()
	msgs := make([]agent.RuntimeMessage, n)
	for i := range msgs {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		msgs[i] = agent.RuntimeMessage{
			ID: fmt.Sprintf("%s%d", prefix, i+1), TurnID: fmt.Sprintf("turn%d", i/2+1),
			Role: role, Kind: "item", Text: fmt.Sprintf("text %d", i+1), Status: "completed",
		}
	}
	return e.insert(t, a, msgs...)
}

func (e *testEnv) insert(t *testing.T, a *ent.AgentSession, msgs ...agent.RuntimeMessage) []*ent.Message {
	t.Helper()
	cur, err := e.st.Client.AgentSession.Get(context.Background(), a.ID)
	if err != nil {
		t.Fatal(err)
	}
	err = e.st.WithTx(context.Background(), func(tx *ent.Tx) error {
		_, err := session.InsertHistory(context.Background(), tx, a, msgs, time.Now())
		return err
	})
	if err != nil {
		t.Fatalf("InsertHistory: %v", err)
	}
	// InsertHistory returns no rows; read back the ones it stored.
	saved, err := e.st.Client.Message.Query().
		Where(message.AgentSessionID(a.ID), message.VersionGT(cur.LastMessageVersion)).
		Order(ent.Asc(message.FieldVersion)).All(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return saved
}

func msg(id, role, text string) agent.RuntimeMessage {
	return agent.RuntimeMessage{ID: id, Role: role, Kind: "item", Text: text, Status: "completed"}
}

func intp(v int) *int       { return &v }
func strp(v string) *string { return &v }
