package codex

import (
	"context"
	"fmt"
	"testing"
	"time"

	"tuttid/benchtest"
	"tuttid/codex/codextest"
	"tuttid/ent"
	"tuttid/fork"
	"tuttid/session"
)

// BenchmarkForkVsRawCodex forks a parent of 100 completed turns on the real
// app-server two ways in the same run, alternating: through tuttid's fork
// service (journal, thread/fork, the child's history read and stored in one
// transaction) and as a raw thread/fork that returns the turns (what a
// client that only wants the child's history pays), alternating which goes
// first. It reports the medians' tuttid/raw as "ratio" (issue 13's target:
// <= 1.0).
func BenchmarkForkVsRawCodex(b *testing.B) {
	const turns = 100
	ctx := context.Background()
	g := startRealRig(b, codextest.StartModelServer(b), 0)
	rt, st, sessions, forks := g.rt, g.st, g.sessions, g.forks
	parent := benchParent(b, ctx, sessions, turns)

	tuttid := make([]time.Duration, 0, b.N)
	raw := make([]time.Duration, 0, b.N)
	forkTuttid := func(i int) {
		t0 := time.Now()
		res, err := forks.Fork(ctx, fork.Input{WorkspaceID: "w", ParentSessionID: parent.ID, RequestID: fmt.Sprintf("bench-%d", i)})
		if err != nil {
			b.Fatal(err)
		}
		tuttid = append(tuttid, time.Since(t0))
		if n, err := st.Client.Message.Query().Count(ctx); err != nil || n == 0 || res.Session.LastMessageVersion == 0 {
			b.Fatalf("child history not stored: %v", err)
		}
	}
	forkRaw := func() {
		p, err := rt.current()
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		var resp wireThreadResponse
		if err := rt.call(ctx, p, "thread/fork", map[string]any{"threadId": parent.ProviderSessionID}, &resp); err != nil {
			b.Fatal(err)
		}
		raw = append(raw, time.Since(t0))
		if len(resp.Thread.Turns) != turns {
			b.Fatalf("raw fork returned %d turns, want %d", len(resp.Thread.Turns), turns)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// Alternate which goes first, so that neither always follows the
		// other's leftover work in the app-server.
		benchtest.Alternate(i, func() { forkTuttid(i) }, forkRaw)
	}
	b.StopTimer()
	// Medians: the machine is shared, and one stalled fork would swing a mean.
	mt, mr := benchtest.Median(tuttid), benchtest.Median(raw)
	b.ReportMetric(float64(mt.Microseconds())/1000, "tuttid-ms/fork")
	b.ReportMetric(float64(mr.Microseconds())/1000, "raw-ms/fork")
	b.ReportMetric(float64(mt)/float64(mr), "ratio")
}

// benchParent starts a session and runs n turns to completion on Codex.
func benchParent(b testing.TB, ctx context.Context, sessions *session.Service, n int) *ent.AgentSession {
	parent, err := sessions.Start(ctx, session.StartInput{WorkspaceID: "w"})
	if err != nil {
		b.Fatal(err)
	}
	sendTurns(b, ctx, sessions, parent.ID, 0, n)
	return parent
}
