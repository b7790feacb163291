package fork_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"tuttid/agent"
	"tuttid/agent/agenttest"
	"tuttid/ent"
	"tuttid/fork"
	"tuttid/logtest"
	"tuttid/session"
	"tuttid/store/storetest"
)

// BenchmarkForkSaga runs the whole saga (checks, title, a provider fork
// that returns no history, the fallback copy of the parent's messages, one
// transaction) for parents of 10 and 1000 messages. ns/message of the large
// parent over the small one's says whether the cost grows with the history
// copied (near 1 or below) or worse.
func BenchmarkForkSaga(b *testing.B) {
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprintf("messages=%d", n), func(b *testing.B) {
			ctx := context.Background()
			st := storetest.New(b)
			quiet := logtest.Discard()
			sess := session.New(session.Config{Store: st.Store, Runtime: agenttest.New(), Logger: quiet})
			svc := fork.New(fork.Config{Store: st.Store, Sessions: sess, Runtime: agenttest.New(), Logger: quiet})
			seedBenchParent(b, st, n)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				res, err := svc.Fork(ctx, fork.Input{WorkspaceID: "w", ParentSessionID: "p", RequestID: fmt.Sprintf("r%d", i)})
				if err != nil || res.Session.LastMessageVersion != int64(n) {
					b.Fatalf("fork %d: %v", i, err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/message")
		})
	}
}

// seedBenchParent stores workspace w and an idle Codex session p with n
// messages, two to a completed turn.
func seedBenchParent(b *testing.B, st *storetest.Store, n int) {
	ctx := context.Background()
	// A real root: the fork checks the parent's cwd on disk.
	root := b.TempDir()
	st.Workspace(storetest.Workspace{ID: "w", RootPath: root})
	p := st.Session(storetest.Session{ID: "p", Workspace: "w", Title: "Parent", Cwd: root})
	msgs := make([]agent.RuntimeMessage, n)
	for i := range msgs {
		msgs[i] = agent.RuntimeMessage{ID: fmt.Sprintf("m%d", i), TurnID: fmt.Sprintf("t%d", i/2), Role: "user", Text: "some text", Status: "completed"}
	}
	err := st.WithTx(ctx, func(tx *ent.Tx) error {
		start := time.Now()
		for i := 0; i < (n+1)/2; i++ {
			if err := tx.Turn.Create().SetTurnID(fmt.Sprintf("t%d", i)).SetAgentSessionID("p").SetStatus("COMPLETED").
				SetStartedAt(start.Add(time.Duration(i) * time.Millisecond)).Exec(ctx); err != nil {
				return err
			}
		}
		_, err := session.InsertHistory(ctx, tx, p, msgs, start)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
}
