package fork_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tuttid/agent"
	"tuttid/agent/agenttest"
	"tuttid/benchtest"
	"tuttid/fork"
	"tuttid/logtest"
	"tuttid/session"
	"tuttid/store"
	"tuttid/store/pgtest"
	"tuttid/store/storetest"
)

// BenchmarkForkPostgresVsSQLite runs the whole fork saga on both backends
// in the same run, on the same parent (the same seeded rows in each), with
// the provider's history on the standard path (the runtime's turns,
// spooled, stored in the child's one transaction), alternating which goes
// first; b.N rounds. It reports the medians and "ratio" (PostgreSQL over
// SQLite; issue 25's target: <= 1.2). PostgreSQL is store/pgtest's
// throwaway cluster (skipped without one, as every pgtest test).
//
//	go test -run '^$' -bench ForkPostgresVsSQLite -benchtime=5x ./fork/
func BenchmarkForkPostgresVsSQLite(b *testing.B) {
	for _, c := range []struct {
		name         string
		turns, bytes int // turns of a user message and a reply of bytes
	}{{"turns=100", 100, 400}, {"MB=16", 16, 1 << 20}} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			history := benchHistory(c.turns, c.bytes)
			type backend struct {
				name string
				svc  *fork.Service
				rt   *agenttest.Runtime
				took []time.Duration
			}
			var backends []*backend
			for _, name := range []string{"sqlite", "postgres"} {
				loc := filepath.Join(b.TempDir(), "tuttid.db")
				if name == "postgres" {
					loc = pgtest.URL(b)
				}
				st, err := store.Open(ctx, loc)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { st.Close() })
				kit := storetest.Wrap(b, st)
				rt := agenttest.New()
				quiet := logtest.Discard()
				sess := session.New(session.Config{Store: st, Runtime: rt, Logger: quiet})
				seedBenchHistory(b, kit, history)
				backends = append(backends, &backend{name: name, rt: rt,
					svc: fork.New(fork.Config{Store: st, Sessions: sess, Runtime: rt, Logger: quiet})})
			}
			forkOn := func(be *backend, i int) {
				be.rt.ScriptForks(agenttest.ForkAnswer{Result: agent.RuntimeForkResult{
					Session: agent.RuntimeSession{ThreadID: fmt.Sprintf("child-%d", i), Status: agent.ThreadIdle},
					History: agent.SliceHistory(history, 4),
				}})
				t0 := time.Now()
				res, err := be.svc.Fork(ctx, fork.Input{WorkspaceID: "w", ParentSessionID: "p", RequestID: fmt.Sprintf("r%d", i)})
				if err != nil {
					b.Fatalf("%s: %v", be.name, err)
				}
				be.took = append(be.took, time.Since(t0))
				if res.Session.LastMessageVersion != int64(2*len(history)) {
					b.Fatalf("%s: child has %d messages", be.name, res.Session.LastMessageVersion)
				}
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				benchtest.Alternate(i, func() { forkOn(backends[0], i) }, func() { forkOn(backends[1], i) })
			}
			b.StopTimer()
			sq, pg := benchtest.Median(backends[0].took), benchtest.Median(backends[1].took)
			b.ReportMetric(float64(sq.Microseconds())/1000, "sqlite-ms")
			b.ReportMetric(float64(pg.Microseconds())/1000, "postgres-ms")
			b.ReportMetric(float64(pg)/float64(sq), "ratio")
		})
	}
}

// benchHistory is the provider's history: n turns of a user message and
// a reply of size bytes.
func benchHistory(n, size int) []agent.RuntimeTurn {
	turns := make([]agent.RuntimeTurn, n)
	for i := range turns {
		id := fmt.Sprintf("t%04d", i)
		reply := strings.Repeat(fmt.Sprintf("reply %d line\n", i), size/10+1)[:size]
		turns[i] = agent.RuntimeTurn{ID: id, Status: agent.TurnCompleted, Messages: []agent.RuntimeMessage{
			{ID: id + "-u", TurnID: id, Role: "user", Kind: "userMessage", Text: "question " + id, Status: "completed",
				Content: []byte(`{"type":"userMessage","id":"` + id + `-u"}`)},
			{ID: id + "-a", TurnID: id, Role: "assistant", Kind: "agentMessage", Text: reply, Status: "completed",
				Content: []byte(`{"type":"agentMessage","id":"` + id + `-a","text":"…"}`)},
		}}
	}
	return turns
}

// seedBenchHistory stores workspace w and an idle session p whose cached
// history is turns.
func seedBenchHistory(b *testing.B, st *storetest.Store, turns []agent.RuntimeTurn) {
	root := b.TempDir()
	st.Workspace(storetest.Workspace{ID: "w", RootPath: root})
	spec := storetest.Session{ID: "p", Workspace: "w", Title: "Parent", Cwd: root}
	for _, t := range turns {
		tt := storetest.Turn{ID: t.ID}
		for _, m := range t.Messages {
			tt.Messages = append(tt.Messages, storetest.Message{ID: m.ID, Role: m.Role, Kind: m.Kind, Text: m.Text, Content: m.Content})
		}
		spec.Turns = append(spec.Turns, tt)
	}
	st.Session(spec)
}
