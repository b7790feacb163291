package readahead_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"tuttid/readahead"
)

func TestListOf(t *testing.T) {
	ctx := readahead.With(context.Background())
	o := readahead.From(ctx)
	o.Listed("sessions", "w1", []string{"a", "b"})
	o.Listed("turns", "a", []string{"b"})
	tests := []struct {
		name      string
		kind      readahead.Kind
		id        string
		wantScope string
		wantIDs   int
	}{
		{"listed session", "sessions", "a", "w1", 2},
		{"same id, other kind", "turns", "b", "a", 1},
		{"not listed", "sessions", "c", "", 0},
		{"unknown kind", "messages", "a", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := o.ListOf(tt.kind, tt.id)
			if tt.wantIDs == 0 {
				if l != nil {
					t.Fatalf("ListOf(%q, %q) = %+v, want nil", tt.kind, tt.id, l)
				}
				return
			}
			if l == nil || l.Scope != tt.wantScope || len(l.IDs) != tt.wantIDs {
				t.Fatalf("ListOf(%q, %q) = %+v, want scope %q with %d ids", tt.kind, tt.id, l, tt.wantScope, tt.wantIDs)
			}
		})
	}
}

func TestNoReadAheadListsNothing(t *testing.T) {
	o := readahead.From(context.Background())
	o.Listed("sessions", "w", []string{"a"}) // must not panic on nil
	if l := o.ListOf("sessions", "a"); l != nil {
		t.Fatalf("ListOf without With = %+v, want nil", l)
	}
}

func TestLoadOncePerKey(t *testing.T) {
	o := readahead.From(readahead.With(context.Background()))
	o.Listed("sessions", "w", []string{"a", "b"})
	l := o.ListOf("sessions", "a")
	var calls atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := readahead.Load(l, "parents", func() (int, error) { calls.Add(1); return 7, nil })
			if err != nil || v != 7 {
				t.Errorf("Load = %d, %v; want 7, nil", v, err)
			}
		}()
	}
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Fatalf("load ran %d times for one key, want 1", n)
	}
	if _, err := readahead.Load(l, "children", func() (int, error) { calls.Add(1); return 1, nil }); err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n != 2 {
		t.Fatalf("a second key ran %d loads in all, want 2", n)
	}
	// Another row of the same list shares its loads.
	if v, _ := readahead.Load(o.ListOf("sessions", "b"), "parents", func() (int, error) { return 0, errors.New("loaded again") }); v != 7 {
		t.Fatalf("the list's other row loaded %d, want the shared 7", v)
	}
}

func TestFailedLoadIsTriedAgain(t *testing.T) {
	o := readahead.From(readahead.With(context.Background()))
	o.Listed("turns", "s", []string{"t1"})
	l := o.ListOf("turns", "t1")
	boom := errors.New("boom")
	if _, err := readahead.Load(l, "messages", func() (string, error) { return "", boom }); !errors.Is(err, boom) {
		t.Fatalf("first Load err = %v, want boom", err)
	}
	v, err := readahead.Load(l, "messages", func() (string, error) { return "ok", nil })
	if err != nil || v != "ok" {
		t.Fatalf("second Load = %q, %v; want the retried load's ok", v, err)
	}
}

func TestTurnIDs(t *testing.T) {
	o := readahead.From(readahead.With(context.Background()))
	o.Listed(readahead.Turns, "s1", []string{readahead.TurnMember("s1", "t1"), readahead.TurnMember("s1", "t2")})
	l := o.ListOf(readahead.Turns, readahead.TurnMember("s1", "t2"))
	if l == nil {
		t.Fatal("a listed turn has no list")
	}
	if got := readahead.TurnIDs(l); len(got) != 2 || got[0] != "t1" || got[1] != "t2" {
		t.Fatalf("TurnIDs = %q, want [t1 t2]", got)
	}
	if o.ListOf(readahead.Turns, readahead.TurnMember("s2", "t1")) != nil {
		t.Fatal("a turn of another session with the same id shares the list")
	}
}
