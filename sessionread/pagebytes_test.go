package sessionread_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"tuttid/agent"
	"tuttid/paging"
	"tuttid/readahead"
	"tuttid/store/storetest"
)

// A page of messages stops before MaxPageBytes of text and content (at
// least one message, whatever its size) and says there is more; paging on
// in either direction still visits every message once, in order.
func TestMessagesPageBytes(t *testing.T) {
	t.Parallel()
	const mb = 1 << 20
	e := newTestEnv(t)
	e.st.Workspace(storetest.Workspace{ID: "w"})
	a := e.st.Session(storetest.Session{ID: "s", Workspace: "w"})
	sizes := []struct{ text, content int }{ // versions 1..8
		{10, 0}, {3 * mb, 0}, {3 * mb, 0}, {3 * mb, 0}, {10, 0}, {9 * mb, 0}, {0, 5 * mb}, {0, 5 * mb},
	}
	var msgs []agent.RuntimeMessage
	for i, s := range sizes {
		m := msg(fmt.Sprintf("m%d", i+1), "assistant", strings.Repeat("x", s.text))
		if s.content > 0 {
			m.Content, _ = json.Marshal(map[string]string{"blob": strings.Repeat("y", s.content)})
		}
		msgs = append(msgs, m)
	}
	e.insert(t, a, msgs...)

	tests := []struct {
		name  string
		args  func(cursor *string) paging.Args
		pages [][]int64
	}{
		{"forward", func(c *string) paging.Args { return paging.Args{First: intp(50), After: c} },
			[][]int64{{1, 2, 3}, {4, 5}, {6}, {7}, {8}}},
		{"forward, the count bound first", func(c *string) paging.Args { return paging.Args{First: intp(2), After: c} },
			[][]int64{{1, 2}, {3, 4}, {5}, {6}, {7}, {8}}},
		{"backward", func(c *string) paging.Args { return paging.Args{Last: intp(50), Before: c} },
			[][]int64{{8}, {7}, {6}, {3, 4, 5}, {1, 2}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got [][]int64
			var cursor *string
			for range 20 {
				p, err := e.svc.Messages(context.Background(), a.ID, tc.args(cursor))
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, versions(p.Nodes))
				more, c := p.HasNextPage, p.Cursors
				if strings.HasPrefix(tc.name, "backward") {
					more = p.HasPreviousPage
				}
				if !more {
					break
				}
				if len(c) == 0 {
					t.Fatal("empty page says there is more")
				}
				edge := c[len(c)-1]
				if strings.HasPrefix(tc.name, "backward") {
					edge = c[0]
				}
				cursor = &edge
			}
			if !slices.EqualFunc(got, tc.pages, slices.Equal) {
				t.Fatalf("pages = %v, want %v", got, tc.pages)
			}
		})
	}
}

// A list's batched pages (the read-ahead: one query for every listed
// session) keep to MaxPageBytes per session the same way.
func TestMessagePagesOfAListKeepToPageBytes(t *testing.T) {
	t.Parallel()
	const mb = 1 << 20
	e := newTestEnv(t)
	e.st.Workspace(storetest.Workspace{ID: "w"})
	big := e.st.Session(storetest.Session{ID: "big", Workspace: "w"})
	e.insert(t, big, msg("b1", "user", "hi"), msg("b2", "assistant", strings.Repeat("x", 5*mb)),
		msg("b3", "user", "more"), msg("b4", "assistant", strings.Repeat("y", 5*mb)))
	small := e.st.Session(storetest.Session{ID: "small", Workspace: "w"})
	e.history(t, small, "s", 4)

	ctx := readahead.With(context.Background())
	if _, err := e.svc.Sessions(ctx, "w", true, nil, paging.Args{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		session string
		args    paging.Args
		want    []int64
		more    bool
	}{
		{big.ID, paging.Args{Last: intp(50)}, []int64{3, 4}, true},
		{big.ID, paging.Args{First: intp(50)}, []int64{1, 2, 3}, true},
		{small.ID, paging.Args{Last: intp(50)}, []int64{1, 2, 3, 4}, false},
		{small.ID, paging.Args{Last: intp(1)}, []int64{4}, true},
		{big.ID, paging.Args{Last: intp(0)}, nil, true},
	} {
		p, err := e.svc.Messages(ctx, tc.session, tc.args)
		if err != nil {
			t.Fatal(err)
		}
		more := p.HasNextPage
		if tc.args.Last != nil {
			more = p.HasPreviousPage
		}
		if !slices.Equal(versions(p.Nodes), tc.want) || more != tc.more || p.TotalCount != 4 {
			t.Errorf("%s %+v: versions %v more %v total %d, want %v more %v total 4",
				tc.session, tc.args, versions(p.Nodes), more, p.TotalCount, tc.want, tc.more)
		}
	}
}
