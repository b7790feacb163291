package historyspool

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"tuttid/agent"
)

func turnOf(id string, text int) agent.RuntimeTurn {
	return agent.RuntimeTurn{ID: id, Status: agent.TurnCompleted,
		Messages: []agent.RuntimeMessage{{ID: id + "-a", TurnID: id, Role: "assistant", Text: strings.Repeat("x", text)}}}
}

// TestSpoolReadsBackInPages: every turn comes back, in order, in pages of
// about pageBytes, then io.EOF.
func TestSpoolReadsBackInPages(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name             string
		turns, text, max int
		pages            []int
	}{
		{"one page", 3, 10, 1 << 20, []int{3}},
		{"a page per turn past the bound", 3, 100, 50, []int{1, 1, 1}},
		{"two turns a page", 5, 30, 50, []int{2, 2, 1}},
		{"none", 0, 0, 10, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp, err := New(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			for i := range tc.turns {
				if err := sp.Add(turnOf(string(rune('a'+i)), tc.text)); err != nil {
					t.Fatal(err)
				}
			}
			if sp.Len() != tc.turns {
				t.Fatalf("Len = %d, want %d", sp.Len(), tc.turns)
			}
			st, err := sp.Stream(tc.max)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			var sizes []int
			var ids string
			for {
				page, err := st.Next(context.Background())
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				sizes = append(sizes, len(page))
				for _, tr := range page {
					ids += tr.ID
				}
			}
			if want := "abcde"[:tc.turns]; ids != want {
				t.Errorf("turns %q, want %q", ids, want)
			}
			if len(sizes) != len(tc.pages) {
				t.Fatalf("pages %v, want %v", sizes, tc.pages)
			}
			for i := range sizes {
				if sizes[i] != tc.pages[i] {
					t.Fatalf("pages %v, want %v", sizes, tc.pages)
				}
			}
			var _ agent.LocalHistory = st
		})
	}
}

// TestSpoolClosedRefusesMore: a closed spool takes no more turns, and a
// missing directory fails at New.
func TestSpoolClosedRefusesMore(t *testing.T) {
	t.Parallel()
	sp, err := New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sp.Close()
	if err := sp.Add(turnOf("a", 1)); err == nil {
		t.Error("Add after Close succeeded")
	}
	if _, err := New(t.TempDir() + "/missing"); err == nil {
		t.Error("New in a missing directory succeeded")
	}
}
