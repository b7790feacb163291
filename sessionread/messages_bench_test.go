package sessionread_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"tuttid/agent"
	"tuttid/ent"
	"tuttid/paging"
	"tuttid/session"
	"tuttid/sessionread"
	"tuttid/store/storetest"
)

// BenchmarkMessagesPage reads messages(first: 50, after: <the middle>) of a
// session of 100,000 messages and, alternating in the same run, of one of
// 1,000 in the same database, without totalCount (counting the rows grows
// with the session; the GraphQL resolver counts only when it is asked for). "ratio" is large/small (issue 13's target:
// <= 1.5, which index-backed cursors give and OFFSET would not).
func BenchmarkMessagesPage(b *testing.B) {
	ctx := context.Background()
	st := storetest.New(b)
	st.Workspace(storetest.Workspace{ID: "w"})
	seed := func(id string, n int) {
		a := st.Session(storetest.Session{ID: id, Workspace: "w", Title: id})
		msgs := make([]agent.RuntimeMessage, n)
		for i := range msgs {
			msgs[i] = agent.RuntimeMessage{ID: fmt.Sprintf("m%d", i), TurnID: fmt.Sprintf("t%d", i/2), Role: "assistant", Text: "some text"}
		}
		if err := st.WithTx(ctx, func(tx *ent.Tx) error {
			_, err := session.InsertHistory(ctx, tx, a, msgs, time.Now())
			return err
		}); err != nil {
			b.Fatal(err)
		}
	}
	seed("large", 100_000)
	seed("small", 1_000)
	svc := sessionread.New(sessionread.Config{Store: st.Store})
	page := func(id string, n int64) time.Duration {
		first, after := 50, paging.Cursor("m", n/2)
		t0 := time.Now()
		p, err := svc.Messages(ctx, id, paging.Args{First: &first, After: &after, SkipTotal: true})
		d := time.Since(t0)
		if err != nil || len(p.Nodes) != 50 || p.Nodes[0].Version != n/2+1 {
			b.Fatalf("page of %s: %d nodes, %v", id, len(p.Nodes), err)
		}
		return d
	}
	var large, small time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		large += page("large", 100_000)
		small += page("small", 1_000)
	}
	b.StopTimer()
	b.ReportMetric(float64(large.Microseconds())/float64(b.N), "large-µs/page")
	b.ReportMetric(float64(small.Microseconds())/float64(b.N), "small-µs/page")
	b.ReportMetric(float64(large)/float64(small), "ratio")
}
