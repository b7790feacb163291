package paging

import (
	"slices"
	"strconv"
	"testing"
)

func TestNewPage(t *testing.T) {
	t.Parallel()
	cursor := func(n int) string { return strconv.Itoa(n) }
	before := int64(9)
	for _, tc := range []struct {
		name               string
		rows               []int // as fetched: in window order, one extra when there are more
		w                  Window
		wantNodes          []int
		wantNext, wantPrev bool
	}{
		{"forward, more", []int{1, 2, 3}, Window{Limit: 2}, []int{1, 2}, true, false},
		{"forward, last page", []int{1, 2}, Window{Limit: 2}, []int{1, 2}, false, false},
		{"backward, more", []int{9, 8, 7}, Window{Limit: 2, Backward: true}, []int{8, 9}, false, true},
		{"backward from a cursor", []int{5}, Window{Limit: 2, Backward: true, Before: &before}, []int{5}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := NewPage(slices.Clone(tc.rows), tc.w, 7, cursor)
			if !slices.Equal(p.Nodes, tc.wantNodes) || p.HasNextPage != tc.wantNext || p.HasPreviousPage != tc.wantPrev || p.TotalCount != 7 {
				t.Errorf("page %+v; want nodes %v next %v previous %v", p, tc.wantNodes, tc.wantNext, tc.wantPrev)
			}
			for i, n := range p.Nodes {
				if p.Cursors[i] != cursor(n) {
					t.Errorf("cursor %d = %q, want %q", i, p.Cursors[i], cursor(n))
				}
			}
		})
	}
}
