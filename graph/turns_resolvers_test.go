package graph_test

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/client"

	"tuttid/sessionread"
	"tuttid/store/storetest"
)

// turnConn is a TurnConnection as the tests read it.
type turnConn struct {
	TotalCount int
	PageInfo   struct {
		HasNextPage, HasPreviousPage bool
		StartCursor, EndCursor       *string
	}
	Edges []struct {
		Cursor string
		Node   struct {
			ID       string
			Messages []struct{ Text string }
		}
	}
}

func (c turnConn) ids() string {
	var out []string
	for _, e := range c.Edges {
		out = append(out, strings.TrimPrefix(e.Node.ID, "s-"))
	}
	return strings.Join(out, " ")
}

const turnPageQuery = `query($first: Int, $after: Cursor, $last: Int, $before: Cursor) {
  session(workspaceId: "ws", id: "s") { turnConnection(first: $first, after: $after, last: $last, before: $before) {
    totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor } edges { cursor node { id messages { text } } } } } }`

func (e *env) turnPage(vars map[string]any) turnConn {
	e.t.Helper()
	var out struct {
		Session struct{ TurnConnection turnConn }
	}
	var opts []client.Option
	for k, v := range vars {
		opts = append(opts, client.Var(k, v))
	}
	e.post(turnPageQuery, &out, opts...)
	return out.Session.TurnConnection
}

// TestTurnConnection pages a session's turns both ways, across turns that
// started at the same instant.
func TestTurnConnection(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.workspace("ws")
	s := sessionSpec("ws", "s", "S", 0, 5) // s-t1 .. s-t5, a minute apart
	// Two more turns started at the same instant as t5: ordered by id.
	for _, id := range []string{"s-t6", "s-t7"} {
		s.Turns = append(s.Turns, storetest.Turn{ID: id, StartedAt: seedTime.Add(5 * time.Minute)})
	}
	e.db.Session(s)
	first := e.turnPage(map[string]any{"first": 3})
	mid := e.turnPage(map[string]any{"first": 3, "after": *first.PageInfo.EndCursor})
	last := e.turnPage(map[string]any{"last": 3})
	before := e.turnPage(map[string]any{"last": 3, "before": *last.PageInfo.StartCursor})

	for _, tc := range []struct {
		name             string
		got              turnConn
		ids              string
		hasNext, hasPrev bool
	}{
		{"first 3", first, "t1 t2 t3", true, false},
		{"first 3 after", mid, "t4 t5 t6", true, true},
		{"first 3 after the tie", e.turnPage(map[string]any{"first": 3, "after": *mid.PageInfo.EndCursor}), "t7", false, true},
		{"last 3", last, "t5 t6 t7", false, true},
		{"last 3 before", before, "t2 t3 t4", true, true},
		{"last 3 before that", e.turnPage(map[string]any{"last": 3, "before": *before.PageInfo.StartCursor}), "t1", true, false},
		{"default page", e.turnPage(nil), "t1 t2 t3 t4 t5 t6 t7", false, false},
		{"between cursors", e.turnPage(map[string]any{"after": first.Edges[0].Cursor, "before": last.Edges[1].Cursor}), "t2 t3 t4 t5", false, true},
		{"first 0", e.turnPage(map[string]any{"first": 0}), "", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.got
			if c.ids() != tc.ids || c.PageInfo.HasNextPage != tc.hasNext || c.PageInfo.HasPreviousPage != tc.hasPrev || c.TotalCount != 7 {
				t.Fatalf("got [%s] next=%v prev=%v total=%d, want [%s] next=%v prev=%v total=7",
					c.ids(), c.PageInfo.HasNextPage, c.PageInfo.HasPreviousPage, c.TotalCount, tc.ids, tc.hasNext, tc.hasPrev)
			}
			if n := len(c.Edges); n > 0 && (*c.PageInfo.StartCursor != c.Edges[0].Cursor || *c.PageInfo.EndCursor != c.Edges[n-1].Cursor) {
				t.Errorf("pageInfo cursors do not match the edges")
			}
			for _, edge := range c.Edges {
				if n := edge.Node.ID; n <= "s-t5" && (len(edge.Node.Messages) != 2 || edge.Node.Messages[0].Text != "s q"+n[3:]) {
					t.Errorf("%s: messages %+v", n, edge.Node.Messages)
				}
			}
		})
	}

	// The same windows on the turns list: oldest first, no cursors out.
	var list struct {
		Session struct{ All, Last, After []struct{ ID string } }
	}
	e.post(`query($c: Cursor) { session(workspaceId: "ws", id: "s") { all: turns { id } last: turns(last: 2) { id }
	  after: turns(first: 2, after: $c) { id } } }`, &list, client.Var("c", *first.PageInfo.EndCursor))
	ids := func(ts []struct{ ID string }) (out []string) {
		for _, t := range ts {
			out = append(out, t.ID)
		}
		return out
	}
	if got := fmt.Sprint(ids(list.Session.All), ids(list.Session.Last), ids(list.Session.After)); got !=
		"[s-t1 s-t2 s-t3 s-t4 s-t5 s-t6 s-t7] [s-t6 s-t7] [s-t4 s-t5]" {
		t.Errorf("turns lists: %s", got)
	}

	msgCursor := ""
	var msgs struct {
		Session struct {
			Messages struct{ Edges []struct{ Cursor string } }
		}
	}
	e.post(`query { session(workspaceId: "ws", id: "s") { messages(first: 1) { edges { cursor } } } }`, &msgs)
	msgCursor = msgs.Session.Messages.Edges[0].Cursor
	for _, tc := range []struct{ name, query string }{
		{"first over the maximum", `turnConnection(first: 501) { totalCount }`},
		{"negative last", `turnConnection(last: -1) { totalCount }`},
		{"first and last", `turnConnection(first: 1, last: 1) { totalCount }`},
		{"garbage cursor", `turnConnection(after: "nope") { totalCount }`},
		{"a message cursor", `turnConnection(after: "` + msgCursor + `") { totalCount }`},
		{"a turn cursor with a bad id", `turnConnection(after: "` + base64.RawURLEncoding.EncodeToString([]byte("t:1:x")) + `") { totalCount }`},
		{"list over the maximum", `turns(first: 501) { id }`},
		{"list with a garbage cursor", `turns(before: "nope") { id }`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if code := e.postErr(`query { session(workspaceId: "ws", id: "s") { ` + tc.query + ` } }`); code != "invalid_input" {
				t.Errorf("answered %s, want invalid_input", code)
			}
		})
	}
}

// TestTurnBounds: the unpaged list refuses more than its bounds with
// result_too_large; pages stop at their byte budget, with at least one turn.
func TestTurnBounds(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.workspace("ws")
	const mib = 1 << 20
	e.db.Sessions(
		manyTurns("many", 0, sessionread.MaxTurnList+1, 0),
		manyTurns("s", 1, 12, 3*mib/2), // 18 MiB in all, over the list's 16 MiB
		manyTurns("huge", 2, 2, 5*mib), // each turn over a page's budget
	)

	t.Run("unpaged list over the turn bound", func(t *testing.T) {
		if code := e.postErr(`query { session(workspaceId: "ws", id: "many") { turns { id } } }`); code != "result_too_large" {
			t.Errorf("answered %s, want result_too_large", code)
		}
		// A window of it, and its pages, are fine.
		var out struct {
			Session struct {
				Turns          []struct{ ID string }
				TurnConnection struct{ TotalCount int }
			}
		}
		e.post(`query { session(workspaceId: "ws", id: "many") { turns(last: 3) { id } turnConnection(first: 500) { totalCount } } }`, &out)
		if len(out.Session.Turns) != 3 || out.Session.Turns[2].ID != fmt.Sprintf("many-t%d", sessionread.MaxTurnList+1) || out.Session.TurnConnection.TotalCount != sessionread.MaxTurnList+1 {
			t.Errorf("window: %+v", out.Session)
		}
	})
	t.Run("unpaged list over the byte bound", func(t *testing.T) {
		if code := e.postErr(`query { session(workspaceId: "ws", id: "s") { turns { id messages { id } } } }`); code != "result_too_large" {
			t.Errorf("answered %s, want result_too_large", code)
		}
		// Without the messages, the list is small.
		var out struct {
			Session struct{ Turns []struct{ ID string } }
		}
		e.post(`query { session(workspaceId: "ws", id: "s") { turns { id } } }`, &out)
		if len(out.Session.Turns) != 12 {
			t.Errorf("%d turns, want 12", len(out.Session.Turns))
		}
	})

	t.Run("comparison over the byte bound", func(t *testing.T) {
		// s's 18 MiB against huge's 10: each side's own turns are listed.
		for _, field := range []string{"aOnly", "bOnly", "sharedTurns"} {
			q := fmt.Sprintf(`query { compareSessions(workspaceId: "ws", a: "s", b: "huge") { sharedTurnCount %s { id messages { id } } } }`, field)
			want := "result_too_large"
			if code := e.postErr(q); code != want {
				t.Errorf("%s with messages: answered %s, want %s", field, code, want)
			}
		}
		var out struct {
			CompareSessions struct {
				AOnly, BOnly []struct{ ID string }
			}
		}
		e.post(`query { compareSessions(workspaceId: "ws", a: "s", b: "huge") { aOnly { id } bOnly { id } } }`, &out)
		if len(out.CompareSessions.AOnly) != 12 || len(out.CompareSessions.BOnly) != 2 {
			t.Errorf("without messages: %d and %d turns, want 12 and 2", len(out.CompareSessions.AOnly), len(out.CompareSessions.BOnly))
		}
		// 10 MiB and 501 small turns (sized in chunks): within the bound.
		type turnWithMessages struct {
			ID       string
			Messages []struct{ ID string }
		}
		var within struct {
			CompareSessions struct{ AOnly, BOnly []turnWithMessages }
		}
		e.post(`query { compareSessions(workspaceId: "ws", a: "huge", b: "many") { aOnly { id messages { id } } bOnly { id messages { id } } } }`, &within)
		if a, b := within.CompareSessions.AOnly, within.CompareSessions.BOnly; len(a) != 2 || len(b) != sessionread.MaxTurnList+1 || len(a[0].Messages) == 0 {
			t.Errorf("within the bound: %d and %d turns, want 2 and %d, with messages", len(a), len(b), sessionread.MaxTurnList+1)
		}
	})

	for _, tc := range []struct {
		name             string
		session          string
		vars             map[string]any
		ids              string
		hasNext, hasPrev bool
	}{
		// 1.5 MiB a turn: two fit in 4 MiB, a third would not.
		{"first page stops at the budget", "s", map[string]any{"first": 10}, "t1 t2", true, false},
		{"last page stops at the budget", "s", map[string]any{"last": 10}, "t11 t12", false, true},
		{"a turn over the budget comes alone", "huge", map[string]any{"first": 10}, "t1", true, false},
		{"and so does the last", "huge", map[string]any{"last": 10}, "t2", false, true},
		{"a page within the budget is whole", "s", map[string]any{"first": 2}, "t1 t2", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out struct {
				Session struct{ TurnConnection turnConn }
			}
			var opts []client.Option
			for k, v := range tc.vars {
				opts = append(opts, client.Var(k, v))
			}
			e.post(strings.Replace(turnPageQuery, `id: "s"`, `id: "`+tc.session+`"`, 1), &out, opts...)
			c := out.Session.TurnConnection
			var got []string
			for _, edge := range c.Edges {
				got = append(got, edge.Node.ID[strings.LastIndex(edge.Node.ID, "-")+1:])
				if len(edge.Node.Messages) != 1 || len(edge.Node.Messages[0].Text) < mib {
					t.Errorf("%s: messages not read whole", edge.Node.ID)
				}
			}
			if strings.Join(got, " ") != tc.ids || c.PageInfo.HasNextPage != tc.hasNext || c.PageInfo.HasPreviousPage != tc.hasPrev {
				t.Errorf("got [%s] next=%v prev=%v, want [%s] next=%v prev=%v", strings.Join(got, " "),
					c.PageInfo.HasNextPage, c.PageInfo.HasPreviousPage, tc.ids, tc.hasNext, tc.hasPrev)
			}
		})
	}
	t.Run("pages without messages have no byte budget", func(t *testing.T) {
		var out struct {
			Session struct{ TurnConnection turnConn }
		}
		e.post(`query { session(workspaceId: "ws", id: "s") { turnConnection(first: 10) { pageInfo { hasNextPage } edges { node { id } } } } }`, &out)
		if c := out.Session.TurnConnection; len(c.Edges) != 10 || !c.PageInfo.HasNextPage {
			t.Errorf("%d turns, hasNextPage %v; want 10, true", len(c.Edges), c.PageInfo.HasNextPage)
		}
	})
	t.Run("walking the pages reads every turn once", func(t *testing.T) {
		var seen []string
		var after any
		for range 20 {
			c := e.turnPage(map[string]any{"first": 10, "after": after})
			for _, edge := range c.Edges {
				seen = append(seen, edge.Node.ID)
			}
			if !c.PageInfo.HasNextPage {
				break
			}
			after = *c.PageInfo.EndCursor
		}
		if len(seen) != 12 || seen[0] != "s-t1" || seen[11] != "s-t12" {
			t.Errorf("read %v", seen)
		}
	})
}

// TestTurnPageQueryCount: a page of turns with their messages costs the
// same number of SQL queries for 5 turns as for 100.
func TestTurnPageQueryCount(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.workspace("ws")
	e.session("ws", "s", "S", 0, 120)
	counts := map[int]int64{}
	for _, n := range []int{5, 100} {
		var c turnConn
		counts[n] = e.queries.Count(func() { c = e.turnPage(map[string]any{"last": n}) })
		if len(c.Edges) != n || c.TotalCount != 120 || c.Edges[n-1].Node.ID != "s-t120" || len(c.Edges[n-1].Node.Messages) != 2 {
			t.Fatalf("last %d: %d turns, total %d", n, len(c.Edges), c.TotalCount)
		}
	}
	// session, count, turns, their messages' size, their messages.
	if counts[5] != counts[100] || counts[100] != 5 {
		t.Errorf("queries: %v, want 5 for either", counts)
	}
	// Unselected, totalCount costs nothing.
	var out struct {
		Session struct{ TurnConnection turnConn }
	}
	if n := e.queries.Count(func() {
		e.post(`query { session(workspaceId: "ws", id: "s") { turnConnection(last: 100) { edges { node { id messages { text } } } } } }`, &out)
	}); n != 4 {
		t.Errorf("%d queries without totalCount, want 4", n)
	}
}

// manyTurns is a session of workspace ws created i seconds after seedTime
// with n turns (<id>-t1 ..., a second apart), each with one assistant
// message of size bytes (none when size is 0).
func manyTurns(id string, i, n, size int) storetest.Session {
	s := sessionSpec("ws", id, "", i, 0)
	for k := 1; k <= n; k++ {
		tid := fmt.Sprintf("%s-t%d", id, k)
		tr := storetest.Turn{ID: tid, StartedAt: seedTime.Add(time.Duration(k) * time.Second)}
		if size > 0 {
			tr.Messages = []storetest.Message{{ID: tid + "-a", Role: "assistant", Kind: "agentMessage", Text: strings.Repeat("x", size)}}
		}
		s.Turns = append(s.Turns, tr)
	}
	return s
}
