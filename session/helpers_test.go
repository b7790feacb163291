package session

import (
	"context"
	"fmt"
	"testing"
	"time"

	"tuttid/agent"
	"tuttid/ent"
	"tuttid/ent/message"
	"tuttid/sessionread"
	"tuttid/store/storetest"
)

// testEnv is a Service over a real database file (storetest), with no
// runtime (the read paths and the message store do not need one).
type testEnv struct {
	st  *storetest.Store
	svc *Service
}

func newTestEnv(t *testing.T) *testEnv {
	t.Helper()
	st := storetest.New(t)
	return &testEnv{st: st, svc: New(Config{Store: st.Store})}
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
		_, err := InsertHistory(context.Background(), tx, a, msgs, time.Now())
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

// upsert stores one provider item the way ingestion does.
func (e *testEnv) upsert(t *testing.T, a *ent.AgentSession, m agent.RuntimeMessage) (*ent.Message, bool) {
	t.Helper()
	var saved *ent.Message
	var added bool
	err := e.st.WithTx(context.Background(), func(tx *ent.Tx) error {
		var err error
		saved, added, err = upsertMessage(context.Background(), tx, a, m, time.Now())
		return err
	})
	if err != nil {
		t.Fatalf("upsertMessage(%s): %v", m.ID, err)
	}
	return saved, added
}

func msg(id, role, text string) agent.RuntimeMessage {
	return agent.RuntimeMessage{ID: id, Role: role, Kind: "item", Text: text, Status: "completed"}
}

func versions(ms []*ent.Message) []int64 {
	out := make([]int64, len(ms))
	for i, m := range ms {
		out[i] = m.Version
	}
	return out
}

// reads is the read model on the env's store, to check what was stored.
func (e *testEnv) reads() *sessionread.Reader {
	return sessionread.New(sessionread.Config{Store: e.st.Store})
}

func intp(v int) *int       { return &v }
func strp(v string) *string { return &v }
