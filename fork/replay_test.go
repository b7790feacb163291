package fork_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"tuttid/apperr"
	"tuttid/fork"
	"tuttid/session"
)

func TestForkReplaysCompletedRequest(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		in   fork.Input
	}{
		{"whole conversation", input("req-replay")},
		{"every parameter given", fork.Input{
			WorkspaceID: wsID, ParentSessionID: parentID, RequestID: "req-replay",
			ChildSessionID: "child-fixed", LastTurnID: "t1", Title: ptr("Experiment"), Visible: ptr(false),
			Settings: session.SettingsOverride{Model: ptr("gpt-5-mini"), PlanMode: ptr(true)},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			e.st.Session(defaultParent())
			first := e.mustFork(c.in)
			afterFirst := e.counts()
			eventsAfterFirst := len(e.pub.Events())

			// The same request again, also with surrounding blanks that
			// normalization removes.
			again := c.in
			again.RequestID = "  " + again.RequestID + " "
			for i, in := range []fork.Input{c.in, again} {
				res := e.mustFork(in)
				if !res.Replayed {
					t.Errorf("replay %d: Replayed = false", i)
				}
				if res.Session.ID != first.Session.ID {
					t.Errorf("replay %d: child %q, want %q", i, res.Session.ID, first.Session.ID)
				}
				if viewSession(res.Session) != viewSession(first.Session) {
					t.Errorf("replay %d: session\n got %+v\nwant %+v", i, viewSession(res.Session), viewSession(first.Session))
				}
				if viewFork(res.Fork) != viewFork(first.Fork) {
					t.Errorf("replay %d: lineage\n got %+v\nwant %+v", i, viewFork(res.Fork), viewFork(first.Fork))
				}
			}
			if n := e.rt.ForkCalls(); n != 1 {
				t.Errorf("provider fork calls = %d, want 1", n)
			}
			if got := e.counts(); got != afterFirst {
				t.Errorf("replays stored rows: after the first %+v, now %+v", afterFirst, got)
			}
			if n := len(e.pub.Events()); n != eventsAfterFirst {
				t.Errorf("replays published %d events", n-eventsAfterFirst)
			}
		})
	}
}

func TestForkRejectsRequestIDReuseWithDifferentParams(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		edit func(in *fork.Input)
	}{
		{"other lastTurnId", func(in *fork.Input) { in.LastTurnID = "t1" }},
		{"other title", func(in *fork.Input) { in.Title = ptr("Another") }},
		{"other visibility", func(in *fork.Input) { in.Visible = ptr(false) }},
		{"other settings", func(in *fork.Input) { in.Settings.Model = ptr("gpt-5-mini") }},
		{"other target", func(in *fork.Input) { in.ChildSessionID = "child-other" }},
		{"other parent", func(in *fork.Input) { in.ParentSessionID = "parent-2" }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			e.st.Session(defaultParent())
			p2 := defaultParent()
			p2.ID, p2.Thread, p2.Title = "parent-2", "thread-parent-2", "Other"
			e.st.Session(p2)
			e.mustFork(input("req-reuse"))
			before := e.counts()
			in := input("req-reuse")
			c.edit(&in)
			e.forkErr(in, apperr.ForkRequestConflict)
			if n := e.rt.ForkCalls(); n != 1 {
				t.Errorf("provider fork calls = %d, want 1", n)
			}
			if after := e.counts(); after != before {
				t.Errorf("rows changed: before %+v, after %+v", before, after)
			}
		})
	}
}

func TestForkRequestIDIsPerWorkspace(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.st.Session(defaultParent())
	p2 := defaultParent()
	p2.ID, p2.Workspace, p2.Thread = "parent-other-ws", otherWsID, "thread-other-ws"
	e.st.Session(p2)
	a := e.mustFork(input("req-shared"))
	b := e.mustFork(fork.Input{WorkspaceID: otherWsID, ParentSessionID: p2.ID, RequestID: "req-shared"})
	if b.Replayed || a.Session.ID == b.Session.ID {
		t.Errorf("a request id of another workspace was replayed: %q and %q (replayed %v)", a.Session.ID, b.Session.ID, b.Replayed)
	}
	if n := e.rt.ForkCalls(); n != 2 {
		t.Errorf("provider fork calls = %d, want 2", n)
	}
}

func TestForkConcurrentIdenticalRequestsCreateOneChild(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.st.Session(defaultParent())
	entered, release := e.rt.HoldForks(4)

	type outcome struct {
		res *fork.Result
		err error
	}
	out := make(chan outcome, 2)
	run := func() {
		res, err := e.svc.Fork(e.ctx, input("req-same"))
		out <- outcome{res, err}
	}
	go run()
	// The first request is inside the provider fork.
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the first fork never reached the provider")
	}
	started := make(chan struct{})
	go func() { close(started); run() }()
	<-started
	// Give the second request time to reach the provider too, if nothing
	// stopped it; it must not.
	select {
	case n := <-entered:
		t.Errorf("provider fork call %d while the first was in flight", n)
	case <-time.After(300 * time.Millisecond):
	}
	release()

	var results []*fork.Result
	for range 2 {
		o := <-out
		if o.err != nil {
			t.Fatalf("Fork: %v", o.err)
		}
		results = append(results, o.res)
	}
	if results[0].Session.ID != results[1].Session.ID {
		t.Errorf("two children: %q and %q", results[0].Session.ID, results[1].Session.ID)
	}
	if viewFork(results[0].Fork) != viewFork(results[1].Fork) {
		t.Errorf("two lineages:\n%+v\n%+v", viewFork(results[0].Fork), viewFork(results[1].Fork))
	}
	if results[0].Replayed == results[1].Replayed {
		t.Errorf("Replayed = %v and %v, want exactly one replay", results[0].Replayed, results[1].Replayed)
	}
	if n := e.rt.ForkCalls(); n != 1 {
		t.Errorf("provider fork calls = %d, want 1", n)
	}
	if c := e.counts(); c.Sessions != 2 || c.Forks != 1 {
		t.Errorf("sessions = %d, lineage rows = %d; want 2 (parent and one child) and 1", c.Sessions, c.Forks)
	}
}

func TestForkConcurrentDistinctRequestsGetDistinctTitles(t *testing.T) {
	t.Parallel()
	const n = 8
	e := newEnv(t)
	e.st.Session(defaultParent())
	start := make(chan struct{})
	var wg sync.WaitGroup
	results := make([]*fork.Result, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			<-start
			results[i], errs[i] = e.svc.Fork(e.ctx, input(fmt.Sprintf("req-%d", i)))
		})
	}
	close(start)
	wg.Wait()
	var titles []string
	ids := map[string]bool{}
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("fork %d: %v", i, errs[i])
		}
		titles = append(titles, e.session(results[i].Session.ID).Title)
		ids[results[i].Session.ID] = true
	}
	slices.Sort(titles)
	var want []string
	for i := 1; i <= n; i++ {
		want = append(want, fmt.Sprintf("Build login(fork%d)", i))
	}
	slices.Sort(want) // fork10 would sort before fork2; keep both sorted alike
	if !slices.Equal(titles, want) {
		t.Errorf("titles = %s, want %s", fmtTitles(titles), fmtTitles(want))
	}
	if len(ids) != n {
		t.Errorf("%d distinct children, want %d", len(ids), n)
	}
	if calls := e.rt.ForkCalls(); calls != n {
		t.Errorf("provider fork calls = %d, want %d", calls, n)
	}
	if c := e.counts(); c.Forks != n {
		t.Errorf("lineage rows = %d, want %d", c.Forks, n)
	}
}

func TestForkConcurrentForksOfParentsWithOneTitleGetDistinctTitles(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.st.Session(defaultParent())
	twin := defaultParent()
	twin.ID, twin.Thread = "parent-twin", "thread-twin" // same title, same workspace
	e.st.Session(twin)
	entered, release := e.rt.HoldForks(4)

	type outcome struct {
		res *fork.Result
		err error
	}
	out := make(chan outcome, 2)
	run := func(in fork.Input) {
		res, err := e.svc.Fork(e.ctx, in)
		out <- outcome{res, err}
	}
	go run(input("req-a"))
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the first fork never reached the provider")
	}
	go run(fork.Input{WorkspaceID: wsID, ParentSessionID: twin.ID, RequestID: "req-b"})
	// Let the second fork run as far as it can while the first is in
	// flight, then let both finish.
	select {
	case <-entered:
	case <-time.After(300 * time.Millisecond):
	}
	release()
	var titles []string
	for range 2 {
		o := <-out
		if o.err != nil {
			t.Fatalf("Fork: %v", o.err)
		}
		titles = append(titles, e.session(o.res.Session.ID).Title)
	}
	slices.Sort(titles)
	if want := []string{"Build login(fork1)", "Build login(fork2)"}; !slices.Equal(titles, want) {
		t.Errorf("titles = %s, want %s", fmtTitles(titles), fmtTitles(want))
	}
}

// A completed request replayed after its child was deleted answers a
// stable error naming the deleted child; it never forks a second child
// (issue 22, point 5).
func TestReplayAfterChildDeletedMakesNoSecondChild(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.st.Session(defaultParent())
	res := e.mustFork(input("req"))
	if _, err := e.sess.Delete(e.ctx, session.DeleteInput{WorkspaceID: wsID, SessionID: res.Session.ID}); err != nil {
		t.Fatal(err)
	}
	before := e.counts()
	e.forkErr(input("req"), apperr.SessionNotFound)
	if n := e.rt.ForkCalls(); n != 1 {
		t.Errorf("provider fork calls = %d, want 1 (no second child)", n)
	}
	if after := e.counts(); after != before {
		t.Errorf("counts %+v after the replay, want %+v", after, before)
	}
	// Other parameters under the same id still conflict.
	in := input("req")
	in.Title = ptr("other")
	e.forkErr(in, apperr.ForkRequestConflict)
}
