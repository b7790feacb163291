package codex

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"tuttid/codex/codextest"
)

// BenchmarkTurnsListPages measures what a thread/turns/list page costs on
// a big thread (16 turns of 1 MiB replies, a 16 MB rollout), reading the
// whole history with a fixed limit per page. Codex replays the whole
// rollout for every page, so the cost is about pages x rollout: the
// numbers behind historyPageBytes (DEVELOPERS.md).
func BenchmarkTurnsListPages(b *testing.B) {
	const turns, replyBytes = 16, 1 << 20
	ctx := context.Background()
	model := codextest.StartModelServer(b)
	reply := strings.Repeat("lorem ipsum dolor sit amet ", replyBytes/27)
	model.SetReply(func(codextest.Request) codextest.Reply { return codextest.Reply{Text: reply} })
	g := startRealRig(b, model, 5*time.Minute)
	rt, sessions := g.rt, g.sessions
	parent := benchParent(b, ctx, sessions, turns)
	p, err := rt.current()
	if err != nil {
		b.Fatal(err)
	}
	for _, limit := range []int{1, 2, 4, 16} {
		b.Run(fmt.Sprintf("limit=%d", limit), func(b *testing.B) {
			var pages, bytes int
			for i := 0; i < b.N; i++ {
				params := listParams{ThreadID: parent.ProviderSessionID, Limit: limit, SortDirection: "asc", ItemsView: "full"}
				got := 0
				for {
					var page rawTurnsPage
					if err := rt.call(ctx, p, "thread/turns/list", params, &page); err != nil {
						b.Fatal(err)
					}
					pages++
					for _, raw := range page.Data {
						bytes += len(raw)
					}
					got += len(page.Data)
					if page.NextCursor == nil || *page.NextCursor == "" {
						break
					}
					params.Cursor = page.NextCursor
				}
				if got != turns {
					b.Fatalf("read %d turns, want %d", got, turns)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(pages), "ms/page")
			b.ReportMetric(float64(bytes)/float64(pages)/(1<<20), "MiB/page")
		})
	}
}
