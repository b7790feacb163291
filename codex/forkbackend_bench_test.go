package codex

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"tuttid/benchtest"
	"tuttid/codex/codextest"
	"tuttid/ent"
	"tuttid/fork"
	"tuttid/store/pgtest"
)

// forkBackend is one store's rig and parent.
type forkBackend struct {
	name   string
	g      *realRig
	parent *ent.AgentSession
	took   []time.Duration
}

// BenchmarkForkEndToEndPostgresVsSQLite is issue 25's fork on PostgreSQL
// against the same fork on SQLite, end to end: the fork service over the
// real app-server (one each, one model server), the same parent (100
// turns) built on each, forks alternating which goes first; b.N rounds.
// fork/'s BenchmarkForkPostgresVsSQLite is the same with a scripted
// runtime: the stores' part alone.
//
//	go test -run '^$' -bench ForkEndToEndPostgresVsSQLite -benchtime=10x ./codex/
func BenchmarkForkEndToEndPostgresVsSQLite(b *testing.B) {
	ctx := context.Background()
	outer := b
	model := codextest.StartModelServer(b)
	model.SetLogf(nil)
	var backends []*forkBackend
	// testing runs the body with b.N = 1 first: the parents are built once.
	b.Run("turns=100", func(b *testing.B) {
		if backends == nil {
			for _, name := range []string{"sqlite", "postgres"} {
				db := filepath.Join(outliveTB{b, outer}.TempDir(), "tuttid.db")
				if name == "postgres" {
					db = pgtest.URL(outer)
				}
				g := startRealRigOn(outliveTB{b, outer}, model, 0, db)
				backends = append(backends, &forkBackend{name: name, g: g, parent: benchParent(b, ctx, g.sessions, 100)})
				model.ForgetRequests()
			}
		}
		benchForkBackends(b, ctx, backends)
	})
}

func benchForkBackends(b *testing.B, ctx context.Context, backends []*forkBackend) {
	for _, be := range backends {
		be.took = nil
	}
	forkOn := func(be *forkBackend, i int) {
		t0 := time.Now()
		res, err := be.g.forks.Fork(ctx, fork.Input{WorkspaceID: "w", ParentSessionID: be.parent.ID, RequestID: fmt.Sprintf("e2e-%d-%d", b.N, i)})
		if err != nil {
			b.Fatalf("%s: %v", be.name, err)
		}
		be.took = append(be.took, time.Since(t0))
		if res.Session.LastMessageVersion < 200 {
			b.Fatalf("%s: the child has %d messages", be.name, res.Session.LastMessageVersion)
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
}
