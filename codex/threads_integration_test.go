package codex_test

import (
	"slices"
	"testing"
	"time"

	"tuttid/agent"
)

// FindForks finds a fork's child through thread/list on the real Codex
// (the crash recovery path: the child's id was never recorded), and only
// forks of that parent, in that cwd, since the given time.
func TestFindForksListsChildren(t *testing.T) {
	g, _ := newRealRig(t, nil)
	cwd := t.TempDir()
	start := func() string {
		s, err := g.rt.Start(rctx(t), agent.StartInput{Provider: agent.ProviderCodex, Cwd: cwd, Settings: readOnly})
		if err != nil {
			t.Fatal(err)
		}
		return s.ThreadID
	}
	parent, other := start(), start()
	g.turn(t, parent, "hello", readOnly)
	g.turn(t, other, "hello", readOnly)
	before := time.Now()
	fork := func(src string) string {
		res, err := g.rt.Fork(rctx(t), agent.RuntimeForkInput{Provider: agent.ProviderCodex, ParentThreadID: src, Cwd: cwd, Settings: readOnly})
		if err != nil {
			t.Fatal(err)
		}
		return res.Session.ThreadID
	}
	c1, c2 := fork(parent), fork(parent)
	_ = fork(other)

	find := func(after time.Time, dir string) []string {
		found, err := g.rt.FindForks(rctx(t), agent.FindForksInput{Provider: agent.ProviderCodex,
			ParentThreadID: parent, Cwd: dir, CreatedAfter: after})
		if err != nil {
			t.Fatalf("FindForks: %v", err)
		}
		var ids []string
		for _, f := range found {
			if f.ForkedFromID != parent {
				t.Errorf("listed %+v as a fork of %s", f, parent)
			}
			ids = append(ids, f.ThreadID)
		}
		slices.Sort(ids)
		return ids
	}
	want := []string{c1, c2}
	slices.Sort(want)
	if got := find(before, cwd); !slices.Equal(got, want) {
		t.Errorf("forks of the parent = %v, want %v", got, want)
	}
	if got := find(time.Now().Add(time.Hour), cwd); len(got) != 0 {
		t.Errorf("forks created after an hour from now = %v", got)
	}
	if got := find(before, t.TempDir()); len(got) != 0 {
		t.Errorf("forks in another cwd = %v", got)
	}
	// An archived child is no longer listed (what orphans clean relies on).
	if err := g.rt.Archive(rctx(t), agent.ProviderCodex, c1); err != nil {
		t.Fatal(err)
	}
	if got := find(before, cwd); !slices.Equal(got, []string{c2}) {
		t.Errorf("after archiving %s: %v, want [%s]", c1, got, c2)
	}
}
