package sessionread_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/paging"
	"tuttid/sessionread"
	"tuttid/store/storetest"
)

func versions(ms []*ent.Message) []int64 {
	out := make([]int64, len(ms))
	for i, m := range ms {
		out[i] = m.Version
	}
	return out
}

func seq(from, to int64) []int64 {
	var out []int64
	for v := from; v <= to; v++ {
		out = append(out, v)
	}
	return out
}

// pagedSession is a session with 10 messages, versions 1..10, beside a
// second session whose messages must never show up in its pages.
func pagedSession(t *testing.T) (*testEnv, string) {
	e := newTestEnv(t)
	e.st.Workspace(storetest.Workspace{ID: "w"})
	a := e.st.Session(storetest.Session{ID: "s", Workspace: "w"})
	e.history(t, a, "m", 10)
	e.history(t, e.st.Session(storetest.Session{ID: "other", Workspace: "w"}), "m", 4)
	return e, a.ID
}

func TestMessagesPageForward(t *testing.T) {
	t.Parallel()
	e, sid := pagedSession(t)
	ctx := context.Background()
	for _, size := range []int{1, 3, 4, 5, 9, 10, 11, paging.MaxPage} {
		t.Run(fmt.Sprint("first=", size), func(t *testing.T) {
			var all []int64
			var after *string
			for pageNo := 0; ; pageNo++ {
				if pageNo > 20 {
					t.Fatal("paging does not end")
				}
				p, err := e.svc.Messages(ctx, sid, paging.Args{First: intp(size), After: after})
				if err != nil {
					t.Fatal(err)
				}
				if p.TotalCount != 10 {
					t.Fatalf("totalCount = %d, want 10", p.TotalCount)
				}
				if len(p.Nodes) != len(p.Cursors) {
					t.Fatalf("%d nodes but %d cursors", len(p.Nodes), len(p.Cursors))
				}
				if len(p.Nodes) > size {
					t.Fatalf("page of %d nodes for first=%d", len(p.Nodes), size)
				}
				if p.HasPreviousPage != (after != nil) {
					t.Fatalf("page %d: hasPreviousPage = %v", pageNo, p.HasPreviousPage)
				}
				for i, m := range p.Nodes {
					if m.AgentSessionID != sid {
						t.Fatalf("message of session %s in the page", m.AgentSessionID)
					}
					if p.Cursors[i] != paging.Cursor("m", m.Version) {
						t.Fatalf("cursor %q does not encode version %d", p.Cursors[i], m.Version)
					}
				}
				all = append(all, versions(p.Nodes)...)
				if !p.HasNextPage {
					break
				}
				if len(p.Nodes) == 0 {
					t.Fatal("hasNextPage on an empty page")
				}
				after = &p.Cursors[len(p.Cursors)-1] // endCursor
			}
			if want := seq(1, 10); !slices.Equal(all, want) {
				t.Fatalf("collected versions %v, want %v", all, want)
			}
		})
	}
}

func TestMessagesPageBackward(t *testing.T) {
	t.Parallel()
	e, sid := pagedSession(t)
	ctx := context.Background()
	for _, size := range []int{1, 3, 4, 10, 11} {
		t.Run(fmt.Sprint("last=", size), func(t *testing.T) {
			var all []int64
			var before *string
			for pageNo := 0; ; pageNo++ {
				if pageNo > 20 {
					t.Fatal("paging does not end")
				}
				p, err := e.svc.Messages(ctx, sid, paging.Args{Last: intp(size), Before: before})
				if err != nil {
					t.Fatal(err)
				}
				if p.TotalCount != 10 {
					t.Fatalf("totalCount = %d, want 10", p.TotalCount)
				}
				if len(p.Nodes) > size {
					t.Fatalf("page of %d nodes for last=%d", len(p.Nodes), size)
				}
				if p.HasNextPage != (before != nil) {
					t.Fatalf("page %d: hasNextPage = %v", pageNo, p.HasNextPage)
				}
				got := versions(p.Nodes)
				if !slices.IsSorted(got) {
					t.Fatalf("page %v is not in version order", got)
				}
				all = append(got, all...)
				if !p.HasPreviousPage {
					break
				}
				before = &p.Cursors[0] // startCursor
			}
			if want := seq(1, 10); !slices.Equal(all, want) {
				t.Fatalf("collected versions %v, want %v", all, want)
			}
		})
	}
}

func TestMessagesPageWindows(t *testing.T) {
	t.Parallel()
	e, sid := pagedSession(t)
	ctx := context.Background()
	c := func(v int64) *string { return strp(paging.Cursor("m", v)) }
	for _, tc := range []struct {
		name           string
		args           paging.Args
		want           []int64
		hasNext, hasPr bool
	}{
		{"default page", paging.Args{}, seq(1, 10), false, false},
		{"first 0", paging.Args{First: intp(0)}, nil, true, false},
		{"last 0", paging.Args{Last: intp(0)}, nil, false, true},
		{"first 0 after the end", paging.Args{First: intp(0), After: c(10)}, nil, false, true},
		{"first 3", paging.Args{First: intp(3)}, seq(1, 3), true, false},
		{"last 3", paging.Args{Last: intp(3)}, seq(8, 10), false, true},
		{"after 7", paging.Args{First: intp(3), After: c(7)}, seq(8, 10), false, true},
		{"after the end", paging.Args{First: intp(3), After: c(10)}, nil, false, true},
		{"before 4", paging.Args{Last: intp(3), Before: c(4)}, seq(1, 3), true, false},
		{"before the start", paging.Args{Last: intp(3), Before: c(1)}, nil, true, false},
		{"between", paging.Args{First: intp(10), After: c(2), Before: c(6)}, seq(3, 5), false, true},
		{"between backward", paging.Args{Last: intp(2), After: c(2), Before: c(6)}, seq(4, 5), true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := e.svc.Messages(ctx, sid, tc.args)
			if err != nil {
				t.Fatal(err)
			}
			if got := versions(p.Nodes); !slices.Equal(got, tc.want) {
				t.Fatalf("versions = %v, want %v", got, tc.want)
			}
			if p.HasNextPage != tc.hasNext || p.HasPreviousPage != tc.hasPr {
				t.Fatalf("hasNextPage, hasPreviousPage = %v, %v; want %v, %v", p.HasNextPage, p.HasPreviousPage, tc.hasNext, tc.hasPr)
			}
			if p.TotalCount != 10 {
				t.Fatalf("totalCount = %d, want 10", p.TotalCount)
			}
		})
	}
}

func TestMessagesRejectsBadArgs(t *testing.T) {
	t.Parallel()
	e, sid := pagedSession(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		args paging.Args
	}{
		{"first and last", paging.Args{First: intp(3), Last: intp(3)}},
		{"negative first", paging.Args{First: intp(-1)}},
		{"negative last", paging.Args{Last: intp(-1)}},
		{"first too large", paging.Args{First: intp(paging.MaxPage + 1)}},
		{"garbage after", paging.Args{First: intp(3), After: strp("not a cursor")}},
		{"garbage before", paging.Args{Last: intp(3), Before: strp("%%%")}},
		{"not base64url of a number", paging.Args{After: strp(paging.Cursor("m", 1) + "x")}},
		{"session cursor", paging.Args{After: strp(paging.Cursor("s", 1))}},
		{"empty cursor", paging.Args{After: strp("")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := e.svc.Messages(ctx, sid, tc.args)
			if code := apperr.CodeOf(err); code != apperr.InvalidInput {
				t.Fatalf("err = %v (code %q), want invalid_input", err, code)
			}
			if len(p.Nodes) != 0 {
				t.Fatalf("rejected request returned %d nodes", len(p.Nodes))
			}
		})
	}
}

func TestMessagesOfEmptyAndUnknownSession(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.st.Workspace(storetest.Workspace{ID: "w"})
	e.st.Session(storetest.Session{ID: "empty", Workspace: "w"})
	for _, id := range []string{"empty", "missing"} {
		p, err := e.svc.Messages(context.Background(), id, paging.Args{First: intp(3)})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Nodes) != 0 || p.TotalCount != 0 || p.HasNextPage || p.HasPreviousPage {
			t.Fatalf("%s: page = %+v, want empty", id, p)
		}
	}
}

// sessionsAt creates sessions whose creation times are the given offsets
// (in microseconds) from base.
func sessionsAt(t *testing.T, e *testEnv, ws string, base time.Time, hidden map[string]bool, ids []string, offsets []int) {
	t.Helper()
	for i, id := range ids {
		at := base.Add(time.Duration(offsets[i]) * time.Microsecond)
		e.st.Session(storetest.Session{ID: id, Workspace: ws, Hidden: hidden[id], CreatedAt: at})
	}
}

func TestSessionsPaging(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.st.Workspace(storetest.Workspace{ID: "w"})
	e.st.Workspace(storetest.Workspace{ID: "w2"})
	ids := []string{"s1", "s2", "s3", "s4", "s5", "s6", "s7"}
	// Local times without a monotonic reading: see
	// TestSessionsPagingWallClock for why.
	base := time.Date(2026, 7, 1, 12, 0, 0, 0, time.Local)
	sessionsAt(t, e, "w", base, map[string]bool{"s4": true}, ids, []int{1, 2, 3, 4, 5, 6, 7})
	sessionsAt(t, e, "w2", base, nil, []string{"elsewhere"}, []int{3})
	ctx := context.Background()

	visible := []string{"s1", "s2", "s3", "s5", "s6", "s7"}
	for _, tc := range []struct {
		hidden, backward bool
		size             int
		want             []string
	}{
		{false, false, 2, visible},
		{false, true, 4, visible},
		{true, false, 3, ids},
		{true, true, 1, ids},
	} {
		t.Run(fmt.Sprintf("hidden=%v/backward=%v/size=%d", tc.hidden, tc.backward, tc.size), func(t *testing.T) {
			got, total := collectSessions(t, e, "w", tc.hidden, tc.backward, tc.size)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("sessions = %v, want %v", got, tc.want)
			}
			if total != len(tc.want) {
				t.Fatalf("totalCount = %d, want %d", total, len(tc.want))
			}
		})
	}
	if _, err := e.svc.Sessions(ctx, "w", false, nil, paging.Args{After: strp(paging.Cursor("m", 1))}); apperr.CodeOf(err) != apperr.InvalidInput {
		t.Fatalf("message cursor on sessions: err = %v, want invalid_input", err)
	}
}

// collectSessions pages through a workspace's sessions to the end.
func collectSessions(t *testing.T, e *testEnv, ws string, includeHidden, backward bool, size int) ([]string, int) {
	t.Helper()
	ctx := context.Background()
	var all []string
	var cursor *string
	for range 20 {
		args := paging.Args{First: intp(size), After: cursor}
		if backward {
			args = paging.Args{Last: intp(size), Before: cursor}
		}
		p, err := e.svc.Sessions(ctx, ws, includeHidden, nil, args)
		if err != nil {
			t.Fatal(err)
		}
		var page []string
		for _, a := range p.Nodes {
			page = append(page, a.ID)
		}
		if backward {
			all = append(page, all...)
			if !p.HasPreviousPage {
				return all, p.TotalCount
			}
			cursor = &p.Cursors[0]
		} else {
			all = append(all, page...)
			if !p.HasNextPage {
				return all, p.TotalCount
			}
			cursor = &p.Cursors[len(p.Cursors)-1]
		}
	}
	t.Fatalf("paging does not end; so far %v", all)
	return nil, 0
}

// TestSessionsPagingWallClock pages through sessions created the way Start
// creates them (time.Now, in whatever zone). It guards store.DSN's
// _time_format=sqlite and _timezone=UTC: with the driver's default,
// created_at held the monotonic reading and the writer's zone, and the text
// comparison against a cursor bound repeated the first page forever.
func TestSessionsPagingWallClock(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.st.Workspace(storetest.Workspace{ID: "w"})
	want := []string{"a", "b", "c", "d"}
	for i, id := range want {
		now := time.Now()
		if i%2 == 1 {
			now = now.UTC()
		}
		e.st.Session(storetest.Session{ID: id, Workspace: "w", CreatedAt: now})
		time.Sleep(time.Millisecond)
	}
	for _, backward := range []bool{false, true} {
		if got, _ := collectSessions(t, e, "w", false, backward, 1); !slices.Equal(got, want) {
			t.Errorf("backward=%v: sessions = %v, want %v", backward, got, want)
		}
	}
}

// TestSessionsPagingEqualCreationTimes: sessions created in the same
// instant are all paged through; the cursor carries the id that breaks the
// tie of the (created_at, id) order.
func TestSessionsPagingEqualCreationTimes(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.st.Workspace(storetest.Workspace{ID: "w"})
	base := time.Date(2026, 7, 1, 12, 0, 0, 0, time.Local)
	sessionsAt(t, e, "w", base, nil, []string{"a", "b", "c", "d"}, []int{1, 2, 2, 2})
	for _, backward := range []bool{false, true} {
		if got, _ := collectSessions(t, e, "w", false, backward, 1); !slices.Equal(got, []string{"a", "b", "c", "d"}) {
			t.Errorf("backward=%v: sessions = %v, want a, b, c, d", backward, got)
		}
	}
}

func TestFallbackTitle(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 70) // multi-byte: the cut must count runes
	for _, tc := range []struct {
		name, text, want string
	}{
		{"empty", "", sessionread.UntitledTitle},
		{"only whitespace", " \n\t\n  \r\n", sessionread.UntitledTitle},
		{"one line", "Build the login page", "Build the login page"},
		{"first non-empty line", "\n\n   \n  Fix the bug  \nsecond line", "Fix the bug"},
		{"whitespace folded", "  Fix \t the   bug\r\nmore", "Fix the bug"},
		{"exactly 60 runes", strings.Repeat("a", 60), strings.Repeat("a", 60)},
		{"61 runes cut", strings.Repeat("a", 61), strings.Repeat("a", 59) + "…"},
		{"multi-byte cut", long, strings.Repeat("é", 59) + "…"},
		{"cut at a space trims it", strings.Repeat("a", 58) + " " + strings.Repeat("b", 10), strings.Repeat("a", 58) + "…"},
		{"folded before counting", "a" + strings.Repeat(" ", 100) + "b", "a b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := sessionread.FallbackTitle(tc.text)
			if got != tc.want {
				t.Fatalf("sessionread.FallbackTitle(%q) = %q, want %q", tc.text, got, tc.want)
			}
			if n := len([]rune(got)); n > sessionread.MaxDisplayTitle {
				t.Fatalf("title of %d runes, more than %d", n, sessionread.MaxDisplayTitle)
			}
		})
	}
}

func TestDisplayTitle(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.st.Workspace(storetest.Workspace{ID: "w"})
	ctx := context.Background()

	titled := e.st.Session(storetest.Session{ID: "titled", Workspace: "w"})
	titled = e.st.Client.AgentSession.UpdateOne(titled).SetTitle("Explicit").SaveX(ctx)
	e.history(t, titled, "m", 2)

	fromUser := e.st.Session(storetest.Session{ID: "from-user", Workspace: "w"})
	e.insert(t, fromUser,
		msg("a1", "assistant", "I am not the user"),
		msg("u0", "user", ""), // empty text is skipped
		msg("u1", "user", "\n  First   question\nrest"),
		msg("u2", "user", "Second question"),
	)

	onlyAssistant := e.st.Session(storetest.Session{ID: "only-assistant", Workspace: "w"})
	e.insert(t, onlyAssistant, msg("a1", "assistant", "hello"))

	empty := e.st.Session(storetest.Session{ID: "empty", Workspace: "w"})

	for _, tc := range []struct {
		a    *ent.AgentSession
		want string
	}{
		{titled, "Explicit"},
		{fromUser, "First question"},
		{onlyAssistant, sessionread.UntitledTitle},
		{empty, sessionread.UntitledTitle},
	} {
		got, err := e.svc.DisplayTitle(ctx, tc.a)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("DisplayTitle(%s) = %q, want %q", tc.a.ID, got, tc.want)
		}
	}
}
