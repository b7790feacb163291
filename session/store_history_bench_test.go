package session_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"tuttid/agent"
	"tuttid/benchtest"
	"tuttid/ent"
	"tuttid/session"
	"tuttid/store"
	"tuttid/store/storetest"
)

// BenchmarkInsertHistory stores a fork child's history of n messages with
// session.InsertHistory in one transaction, and as the baseline the same
// rows with a bare database/sql prepared INSERT loop in one transaction on
// the same driver and file, alternating in one run. "ratio" is the
// medians' tuttid/bare (issue 13's target: <= 1.5).
func BenchmarkInsertHistory(b *testing.B) {
	for _, n := range []int{100, 10000} {
		b.Run(fmt.Sprintf("messages=%d", n), func(b *testing.B) {
			ctx := context.Background()
			st := storetest.New(b)
			st.Workspace(storetest.Workspace{ID: "w"})
			msgs := make([]agent.RuntimeMessage, n)
			for i := range msgs {
				msgs[i] = agent.RuntimeMessage{ID: fmt.Sprintf("m%d", i), TurnID: fmt.Sprintf("t%d", i/2), Role: "assistant",
					Kind: "agentMessage", Text: "a reply of some length, as a model writes it", Status: "completed"}
			}
			newSession := func(id string) *ent.AgentSession {
				return st.Session(storetest.Session{ID: id, Workspace: "w", Title: id})
			}
			tuttid := make([]time.Duration, 0, b.N)
			bare := make([]time.Duration, 0, b.N)
			runTuttid := func(a *ent.AgentSession) {
				t0 := time.Now()
				err := st.WithTx(ctx, func(tx *ent.Tx) error {
					_, err := session.InsertHistory(ctx, tx, a, msgs, t0)
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
				tuttid = append(tuttid, time.Since(t0))
			}
			runBare := func(r *ent.AgentSession) {
				t0 := time.Now()
				if err := bareInsert(ctx, st.Store, r, msgs, t0); err != nil {
					b.Fatal(err)
				}
				bare = append(bare, time.Since(t0))
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				a := newSession(fmt.Sprintf("t%d", i))
				r := newSession(fmt.Sprintf("r%d", i))
				b.StartTimer()
				// Alternate which goes first (the second finds a warmer cache).
				benchtest.Alternate(i, func() { runTuttid(a) }, func() { runBare(r) })
			}
			b.StopTimer()
			// Medians: on a shared machine one stall would swing a mean.
			mt, mb := benchtest.Median(tuttid), benchtest.Median(bare)
			b.ReportMetric(float64(mt.Microseconds()), "tuttid-µs/op")
			b.ReportMetric(float64(mb.Microseconds()), "bare-µs/op")
			b.ReportMetric(float64(mt)/float64(mb), "ratio")
		})
	}
}

func bareInsert(ctx context.Context, st *store.Store, a *ent.AgentSession, msgs []agent.RuntimeMessage, now time.Time) error {
	tx, err := st.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO workspace_agent_messages
		(message_id, workspace_id, turn_id, role, kind, text, content_json, status, version, created_at, updated_at, agent_session_id)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for i, m := range msgs {
		if _, err := stmt.ExecContext(ctx, m.ID, a.WorkspaceID, m.TurnID, m.Role, m.Kind, m.Text, "{}", m.Status, int64(i+1), now, now, a.ID); err != nil {
			return err
		}
	}
	return tx.Commit()
}
