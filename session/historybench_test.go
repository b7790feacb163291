package session_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"tuttid/agent"
	"tuttid/ent"
	"tuttid/session"
	"tuttid/store"
)

// BenchmarkInsertHistory stores a fork child's history of n messages with
// session.InsertHistory in one transaction, and as the baseline the same
// rows with a bare database/sql prepared INSERT loop in one transaction on
// the same driver and file, alternating in one run. "ratio" is tuttid/bare
// (issue 13's target: <= 1.5).
func BenchmarkInsertHistory(b *testing.B) {
	for _, n := range []int{100, 10000} {
		b.Run(fmt.Sprintf("messages=%d", n), func(b *testing.B) {
			ctx := context.Background()
			st, err := store.Open(ctx, filepath.Join(b.TempDir(), "tuttid.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			if err := st.Client.Workspace.Create().SetID("w").SetName("w").SetRootPath("/tmp").Exec(ctx); err != nil {
				b.Fatal(err)
			}
			msgs := make([]agent.RuntimeMessage, n)
			for i := range msgs {
				msgs[i] = agent.RuntimeMessage{ID: fmt.Sprintf("m%d", i), TurnID: fmt.Sprintf("t%d", i/2), Role: "assistant",
					Kind: "agentMessage", Text: "a reply of some length, as a model writes it", Status: "completed"}
			}
			newSession := func(id string) *ent.AgentSession {
				a, err := st.Client.AgentSession.Create().SetID(id).SetWorkspaceID("w").SetProvider(agent.ProviderCodex).
					SetProviderSessionID("thread-" + id).SetTitle(id).SetSettings(agent.ComposerSettings{}).Save(ctx)
				if err != nil {
					b.Fatal(err)
				}
				return a
			}
			var tuttid, bare time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				a := newSession(fmt.Sprintf("t%d", i))
				r := newSession(fmt.Sprintf("r%d", i))
				b.StartTimer()
				t0 := time.Now()
				err := st.WithTx(ctx, func(tx *ent.Tx) error {
					_, err := session.InsertHistory(ctx, tx, a, msgs, t0)
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
				tuttid += time.Since(t0)
				t0 = time.Now()
				if err := bareInsert(ctx, st, r, msgs, t0); err != nil {
					b.Fatal(err)
				}
				bare += time.Since(t0)
			}
			b.StopTimer()
			b.ReportMetric(float64(tuttid.Microseconds())/float64(b.N), "tuttid-µs/op")
			b.ReportMetric(float64(bare.Microseconds())/float64(b.N), "bare-µs/op")
			b.ReportMetric(float64(tuttid)/float64(bare), "ratio")
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
