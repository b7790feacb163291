package codex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"tuttid/agent"
	"tuttid/codex/codextest"
)

func TestNextLimit(t *testing.T) {
	for _, c := range []struct {
		name                       string
		bytes, turns, target, most int
		want                       int
	}{
		{"small turns fill the page", 1000, 10, 4 << 20, 100, 100},
		{"5 MB turns: one a page", 10 << 20, 2, 4 << 20, 100, 1},
		{"1 MiB turns: four a page", 2 << 20, 2, 4 << 20, 100, 4},
		{"a turn just over the target", 4<<20 + 1, 1, 4 << 20, 100, 1},
		{"uneven bytes round the turn size up", 7, 2, 8, 100, 2},
		{"empty page: the most", 0, 0, 4 << 20, 100, 100},
		{"the most bounds", 10, 10, 4 << 20, 7, 7},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := nextLimit(c.bytes, c.turns, c.target, c.most); got != c.want {
				t.Errorf("nextLimit(%d, %d, %d, %d) = %d, want %d", c.bytes, c.turns, c.target, c.most, got, c.want)
			}
		})
	}
}

// TestFakeForkHistoryPagesByBytes: the child's history is read in pages
// whose limit follows the bytes per turn of the page before (big turns
// one a page), page by page as the caller asks, in order.
func TestFakeForkHistoryPagesByBytes(t *testing.T) {
	g := startFake(t, "fork_no_turns")
	g.rt.pageBytes = 1024
	parent := g.start(t, defaultSettings).ThreadID
	var want []string
	for _, text := range []string{"s1", "s2", "s3", strings.Repeat("b", 3000), strings.Repeat("c", 3000), "s4", "s5", strings.Repeat("d", 500), "s6"} {
		tr, _ := g.turn(t, parent, text, defaultSettings)
		want = append(want, tr.ID)
	}
	// The sizes Codex reports for each turn (the fake's child holds copies).
	p, err := g.rt.current()
	if err != nil {
		t.Fatal(err)
	}
	var all rawTurnsPage
	if err := g.rt.call(ctxT(t), p, "thread/turns/list", listParams{ThreadID: parent, Limit: 100, SortDirection: "asc", ItemsView: "full"}, &all); err != nil {
		t.Fatal(err)
	}
	var wantLimits []int
	for i, limit := 0, firstPageTurns; i < len(all.Data); {
		wantLimits = append(wantLimits, limit)
		page := all.Data[i:min(i+limit, len(all.Data))]
		bytes := 0
		for _, raw := range page {
			bytes += len(raw)
		}
		i += len(page)
		limit = nextLimit(bytes, len(page), g.rt.pageBytes, g.rt.pageSize)
	}

	res, err := g.rt.Fork(ctxT(t), agent.RuntimeForkInput{Provider: agent.ProviderCodex, ParentThreadID: parent, Settings: defaultSettings})
	if err != nil {
		t.Fatal(err)
	}
	child := res.Session.ThreadID
	var got []string
	pages := 0
	for {
		page, err := res.History.Next(ctxT(t))
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		pages++
		// At most one page is read ahead of the one the caller holds.
		if asked := len(childLists(t, g, child)); asked > pages+1 {
			t.Fatalf("after %d pages delivered, %d were asked of Codex", pages, asked)
		}
		for _, tr := range page {
			got = append(got, tr.ID)
		}
	}
	res.History.Close()
	if !slices.Equal(got, want) {
		t.Fatalf("child turns %v, want %v", got, want)
	}
	var limits []int
	for _, p := range childLists(t, g, child) {
		limits = append(limits, p.Limit)
	}
	if !slices.Equal(limits, wantLimits) || !slices.Contains(limits, 1) || slices.Max(limits) < 3 {
		t.Fatalf("page limits %v, want %v (one big turn a page, several small ones)", limits, wantLimits)
	}
}

// TestFakeForkHistoryFailsMidway: a Codex that fails a later page makes the
// stream fail (the fork service then falls back to the parent's cache).
func TestFakeForkHistoryFailsMidway(t *testing.T) {
	g := startFake(t, "fork_no_turns")
	g.rt.pageSize = 1
	parent := g.start(t, defaultSettings).ThreadID
	for _, text := range []string{"a", "b", "c", "d"} {
		g.turn(t, parent, text, defaultSettings)
	}
	res, err := g.rt.Fork(ctxT(t), agent.RuntimeForkInput{Provider: agent.ProviderCodex, ParentThreadID: parent, Settings: defaultSettings})
	if err != nil {
		t.Fatal(err)
	}
	defer res.History.Close()
	if _, err := res.History.Next(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	// The fake forgets the child: the next page read fails.
	g.rt.Archive(ctxT(t), agent.ProviderCodex, res.Session.ThreadID)
	var err2 error
	for err2 == nil {
		_, err2 = res.History.Next(ctxT(t))
	}
	if errors.Is(err2, io.EOF) {
		t.Fatal("a history whose thread went away ended as if complete")
	}
}

// childLists are the thread/turns/list params Codex got for a thread.
func childLists(t *testing.T, g *fakeRig, thread string) []listParams {
	t.Helper()
	var out []listParams
	for _, e := range g.log(t) {
		var p listParams
		if e.Method == "thread/turns/list" && json.Unmarshal(e.Params, &p) == nil && p.ThreadID == thread {
			out = append(out, p)
		}
	}
	return out
}

// TestFakeForkHistoryHint: a caller's hint that the history is far smaller
// than a page makes the first read a full page's worth, as two halves from
// both ends; no hint, or a big one, keeps the small first page that learns
// the turns' size.
func TestFakeForkHistoryHint(t *testing.T) {
	for _, c := range []struct {
		name      string
		hint      int64
		wantFirst int
	}{
		{"no hint", 0, firstPageTurns},
		{"small history", 10 << 10, 50},
		{"history past half a page", historyPageBytes/2 + 1, firstPageTurns},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := startFake(t, "fork_no_turns")
			parent := g.start(t, defaultSettings).ThreadID
			for _, text := range []string{"a", "b", "c"} {
				g.turn(t, parent, text, defaultSettings)
			}
			res, err := g.rt.Fork(ctxT(t), agent.RuntimeForkInput{Provider: agent.ProviderCodex, ParentThreadID: parent,
				Settings: defaultSettings, HistoryBytesHint: c.hint})
			if err != nil {
				t.Fatal(err)
			}
			turns, err := agent.ReadHistory(ctxT(t), res.History)
			if err != nil || len(turns) != 3 {
				t.Fatalf("history: %d turns, %v", len(turns), err)
			}
			if lists := childLists(t, g, res.Session.ThreadID); len(lists) == 0 || lists[0].Limit != c.wantFirst {
				t.Fatalf("child pages %+v, want a first limit of %d", lists, c.wantFirst)
			}
		})
	}
}

// TestFakeForkHistoryBothEnds: a small history's first read asks for its
// oldest and newest halves at once, and joins them only where Codex says
// they meet; overlapping halves lose the overlap, and halves with a gap
// between them leave the rest to ascending pages. Every way, the turns
// come out once each, in order.
func TestFakeForkHistoryBothEnds(t *testing.T) {
	for _, c := range []struct {
		name      string
		turns     int
		wantLists int // thread/turns/list calls for the child
	}{
		{"halves meet", 4, 3},       // asc 2, desc 2, the turn after asc
		{"halves overlap", 3, 3},    // asc 2, desc 2 (one shared), the turn after
		{"all in the oldest", 2, 2}, // asc 2 with no cursor after: desc dropped
		{"a gap between", 7, 5},     // asc 2, desc 2, the turn after, then asc 4, asc 1
	} {
		t.Run(c.name, func(t *testing.T) {
			g := startFake(t, "fork_no_turns")
			g.rt.pageSize = 4
			parent := g.start(t, defaultSettings).ThreadID
			var want []string
			for i := range c.turns {
				tr, _ := g.turn(t, parent, string(rune('a'+i)), defaultSettings)
				want = append(want, tr.ID)
			}
			res, err := g.rt.Fork(ctxT(t), agent.RuntimeForkInput{Provider: agent.ProviderCodex, ParentThreadID: parent,
				Settings: defaultSettings, HistoryBytesHint: 100})
			if err != nil {
				t.Fatal(err)
			}
			turns, err := agent.ReadHistory(ctxT(t), res.History)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tr := range turns {
				got = append(got, tr.ID)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("child turns %v, want %v", got, want)
			}
			// The two halves are asked for at once: Codex may get either first.
			lists := childLists(t, g, res.Session.ThreadID)
			if len(lists) != c.wantLists {
				t.Fatalf("child lists %+v, want %d", lists, c.wantLists)
			}
			firstTwo := []string{lists[0].SortDirection, lists[1].SortDirection}
			slices.Sort(firstTwo)
			if !slices.Equal(firstTwo, []string{"asc", "desc"}) {
				t.Fatalf("child lists %+v, want the first two an asc and a desc half", lists)
			}
		})
	}
}

// TestCodexForkHistoryBothEnds: on the real app-server, a fork child's
// history read from both ends (halves that meet, and halves with a gap) is
// the same, turn for turn and item for item, as its history read in
// ascending pages.
func TestCodexForkHistoryBothEnds(t *testing.T) {
	ctx := context.Background()
	g := startRealRig(t, codextest.StartModelServer(t), 0)
	rt, sessions := g.rt, g.sessions
	parent := benchParent(t, ctx, sessions, 5)
	view := func(ts []agent.RuntimeTurn) []string {
		var out []string
		for _, tr := range ts {
			for _, m := range tr.Messages {
				out = append(out, tr.ID+"/"+m.ID+"/"+m.Text)
			}
		}
		return out
	}
	for _, c := range []struct {
		name      string
		pageSize  int
		wantPages int // 1: the halves were joined
	}{{"halves meet", 5, 1}, {"halves overlap", 6, 1}, {"a gap between the halves", 4, 2}} {
		t.Run(c.name, func(t *testing.T) {
			rt.pageSize = c.pageSize
			res, err := rt.Fork(ctx, agent.RuntimeForkInput{Provider: agent.ProviderCodex, ParentThreadID: parent.ProviderSessionID,
				Settings: agent.ComposerSettings{PermissionModeID: agent.PermissionReadOnly}, HistoryBytesHint: 100})
			if err != nil {
				t.Fatal(err)
			}
			got, err := agent.ReadHistory(ctx, res.History)
			if err != nil {
				t.Fatal(err)
			}
			if pages := res.History.(*historyStream).pages; pages != c.wantPages {
				t.Errorf("read in %d pages, want %d", pages, c.wantPages)
			}
			rt.pageSize = 1
			want, err := rt.History(ctx, agent.HistoryInput{Provider: agent.ProviderCodex, ThreadID: res.Session.ThreadID})
			if err != nil {
				t.Fatal(err)
			}
			if len(want) != 5 || !slices.Equal(view(got), view(want)) {
				t.Fatalf("read from both ends:\n%v\nin ascending pages:\n%v", view(got), view(want))
			}
		})
	}
}

// TestFakeHistoryOfSomeTurns: History for named turns reads newest first
// and stops once it has them, returning only them; a turn Codex does not
// have costs the whole read and is simply absent.
func TestFakeHistoryOfSomeTurns(t *testing.T) {
	g := startFake(t, "fork_no_turns")
	g.rt.pageSize = 2 // 9 turns: 5 pages in all
	const last = -1
	for _, c := range []struct {
		name               string
		want               []int // indexes of the turns asked for; last: one Codex lacks
		minLists, maxLists int   // thread/turns/list calls, the one read ahead included
	}{
		{"the newest", []int{8}, 1, 2},
		{"the two newest", []int{7, 8}, 1, 2},
		{"the oldest", []int{0}, 5, 5},
		{"one Codex lacks", []int{last}, 5, 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			// A thread each: a page read ahead and cancelled may reach the
			// fake's log late.
			thread := g.start(t, defaultSettings).ThreadID
			var ids []string
			for i := range 9 {
				tr, _ := g.turn(t, thread, fmt.Sprintf("turn %d", i), defaultSettings)
				ids = append(ids, tr.ID)
			}
			var ask, want []string
			for _, i := range c.want {
				if i == last {
					ask = append(ask, "no-such-turn")
					continue
				}
				ask = append(ask, ids[i])
				want = append(want, ids[i])
			}
			turns, err := g.rt.History(ctxT(t), agent.HistoryInput{Provider: agent.ProviderCodex,
				ThreadID: thread, TurnIDs: ask})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tr := range turns {
				got = append(got, tr.ID)
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("turns %v, want %v", got, want)
			}
			lists := childLists(t, g, thread)
			if len(lists) < c.minLists || len(lists) > c.maxLists {
				t.Fatalf("%d thread/turns/list calls, want %d..%d", len(lists), c.minLists, c.maxLists)
			}
			for _, l := range lists {
				if l.SortDirection != "desc" {
					t.Fatalf("list %+v, want newest first", l)
				}
			}
		})
	}
}
