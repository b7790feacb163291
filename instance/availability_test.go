package instance_test

import (
	"context"
	"testing"
	"time"

	"tuttid/instance"
	"tuttid/store/storetest"
)

// A session is available when this instance owns it (always: SQLite's
// one instance) or its owner's heartbeat is at most DownAfter old; the
// reason names the owner and the age of its last heartbeat. One read of
// the instances table answers for a second.
func TestAvailability(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	clk := &clock{t: storetest.SeedTime()}
	a := instance.New(instance.Config{Client: st.Client, ID: "a", AdvertiseURL: "http://127.0.0.1:1", Now: clk.now})
	b := instance.New(instance.Config{Client: st.Client, ID: "b", AdvertiseURL: "http://127.0.0.1:2", Now: clk.now})
	st.Workspace(storetest.Workspace{ID: "w"})
	st.Sessions(storetest.Session{ID: "s1", Workspace: "w"}, storetest.Session{ID: "s2", Workspace: "w"})
	for _, r := range []*instance.Registry{a, b} {
		if err := r.Register(ctx, false); err != nil {
			t.Fatal(err)
		}
	}
	check := func(when string, owner string, wantOK bool, wantWhy string) {
		t.Helper()
		ok, why, err := b.Availability(ctx, owner)
		if err != nil || ok != wantOK || why != wantWhy {
			t.Errorf("%s: b.Availability(%q) = %v, %q, %v; want %v, %q", when, owner, ok, why, err, wantOK, wantWhy)
		}
	}
	check("at start", "a", true, "")
	check("at start", "b", true, "")
	check("at start", "", true, "")
	check("at start", "gone", false, "instance gone is not registered")
	clk.add(instance.DownAfter + 5*time.Second)
	check("20 s later", "a", false, "instance a is down: last heartbeat 20s ago")
	check("20 s later", "b", true, "") // b answers: it is up, whatever its row says
	// The workspace's unavailable sessions: a's, with the reason.
	un, err := b.UnavailableIn(ctx, "w")
	if err != nil || len(un) != 2 || un[0].SessionID != "s1" || un[1].SessionID != "s2" ||
		un[0].Reason != "instance a is down: last heartbeat 20s ago" {
		t.Errorf("b.UnavailableIn(w) = %+v, %v; want s1 and s2, a down", un, err)
	}
	if un, err := b.UnavailableIn(ctx, "other"); err != nil || len(un) != 0 {
		t.Errorf("b.UnavailableIn(other) = %+v, %v; want none", un, err)
	}
	// a is back: its new heartbeat shows within the cache's second.
	if err := a.Register(ctx, false); err != nil {
		t.Fatal(err)
	}
	check("a's heartbeat, same instant (cached read)", "a", false, "instance a is down: last heartbeat 20s ago")
	clk.add(time.Second)
	check("a second later", "a", true, "")

	// Counted: a thousand questions within the second read the table once.
	counted, cnt := st.Counting()
	c := instance.New(instance.Config{Client: counted.Client, ID: "c", AdvertiseURL: "http://127.0.0.1:3", Now: clk.now})
	if err := c.Register(ctx, false); err != nil {
		t.Fatal(err)
	}
	cnt.Reset()
	for range 1000 {
		if _, _, err := c.Availability(ctx, "a"); err != nil {
			t.Fatal(err)
		}
	}
	if n := cnt.N(); n != 1 {
		t.Errorf("1000 availability questions in one second: %d reads of the instances table, want 1", n)
	}
	// Every instance up: the workspace's unavailable sessions cost no
	// session read.
	for _, r := range []*instance.Registry{a, b} {
		if err := r.Register(ctx, false); err != nil {
			t.Fatal(err)
		}
	}
	clk.add(time.Second)
	cnt.Reset()
	if un, err := c.UnavailableIn(ctx, "w"); err != nil || len(un) != 0 || cnt.N() != 1 {
		t.Errorf("UnavailableIn with every instance up: %+v, %v, %d statements; want none, one read of the instances", un, err, cnt.N())
	}
}
