package fork_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"tuttid/agent"
	"tuttid/agent/agenttest"
	"tuttid/ent/forkjournal"
	"tuttid/fork"
)

// A replay of a timed-out fork settles its old attempt under the parent's
// lock: a sibling fork in flight (Codex made its thread, the journal has
// not recorded it yet) keeps its thread, and its child is not stored on an
// archived thread (issue 22, point 1).
func TestReplaySettleSparesSiblingInFlight(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.st.Session(defaultParent())
	// req-a timed out earlier: pending, no thread.
	e.insertEntry("req-a", forkjournal.StatePending, "")
	// Codex has made the sibling's thread (call 1) as soon as it is asked.
	e.rt.SetListed([]agent.ThreadInfo{{ThreadID: agenttest.ChildThreadID(1), ForkedFromID: parentThread}}, nil)
	entered, release := e.rt.HoldForks(2)

	sibling := make(chan error, 1)
	go func() {
		_, err := e.svc.Fork(e.ctx, input("req-b"))
		sibling <- err
	}()
	<-entered // req-b is in flight, its journal entry pending
	replay := make(chan error, 1)
	go func() {
		_, err := e.svc.Fork(e.ctx, input("req-a"))
		replay <- err
	}()
	// Give the replay the time to settle (before the fix it archived the
	// sibling's thread here, without waiting for the parent's lock).
	time.Sleep(200 * time.Millisecond)
	release()
	if err := <-sibling; err != nil {
		t.Fatalf("sibling fork: %v", err)
	}
	if err := <-replay; err != nil {
		t.Fatalf("replay: %v", err)
	}
	for _, a := range e.rt.Archived() {
		if a == agenttest.ChildThreadID(1) {
			t.Errorf("the sibling's thread %s was archived while its child owns it (archived %v)", a, e.rt.Archived())
		}
	}
	if j := e.journal("req-a")[0]; j.ChildProviderSessionID == agenttest.ChildThreadID(1) {
		t.Errorf("req-a's old attempt claimed the sibling's thread: %s %q", j.State, j.ChildProviderSessionID)
	}
	if j := e.journal("req-b")[0]; j.State != forkjournal.StateDone {
		t.Errorf("req-b: %s, want done", j.State)
	}
}

// `tuttid orphans clean` beside a running server leaves an in-flight
// fork's thread alone, never lists a thread a session owns, and never
// archives it (issue 22, point 2).
func TestCleanOrphansBesideServerSparesLiveThreads(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.st.Session(defaultParent())
	// An attempt that timed out long ago: stale, pending, no thread.
	old := e.insertEntry("req-old", forkjournal.StatePending, "")
	e.st.Client.ForkJournal.UpdateOneID(old.ID).SetUpdatedAt(time.Now().Add(-10 * time.Minute)).ExecX(e.ctx)
	e.rt.SetListed([]agent.ThreadInfo{{ThreadID: agenttest.ChildThreadID(1), ForkedFromID: parentThread}}, nil)
	entered, release := e.rt.HoldForks(1)
	done := make(chan error, 1)
	go func() {
		_, err := e.svc.Fork(e.ctx, input("req-live"))
		done <- err
	}()
	<-entered

	// The clean command is another process: its own service on the same
	// database, whose Codex cannot archive a thread the server holds open.
	cleaner := agenttest.New()
	cleaner.SetListed([]agent.ThreadInfo{{ThreadID: agenttest.ChildThreadID(1), ForkedFromID: parentThread}}, nil)
	cleaner.FailArchive(errors.New("thread has an active writer"))
	clean := fork.New(fork.Config{Store: e.st.Store, Sessions: e.sess, Accounts: e.acc, Runtime: cleaner, Logger: e.logger})
	_, _ = clean.CleanOrphans(e.ctx, 5*time.Minute)
	release()
	if err := <-done; err != nil {
		t.Fatalf("fork: %v", err)
	}
	live := e.journal("req-live")[0]
	if live.State != forkjournal.StateDone || live.ChildProviderSessionID != agenttest.ChildThreadID(1) {
		t.Fatalf("live fork: %s %q", live.State, live.ChildProviderSessionID)
	}
	if j := e.journal("req-old")[0]; j.ChildProviderSessionID == live.ChildProviderSessionID {
		t.Errorf("the stale attempt claimed the live fork's thread: %s %q", j.State, j.ChildProviderSessionID)
	}
	orphans, err := fork.ListOrphans(e.ctx, e.st.Store)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range orphans {
		if o.ProviderThreadID == live.ChildProviderSessionID {
			t.Errorf("a live child's thread is listed as an orphan: %+v", o)
		}
	}
	cleaner.FailArchive(nil)
	if _, err := clean.CleanOrphans(e.ctx, 5*time.Minute); err != nil {
		t.Fatal(err)
	}
	if got := cleaner.Archived(); slices.Contains(got, live.ChildProviderSessionID) {
		t.Errorf("a later clean archived the live child's thread: %v", got)
	}
}

// An entry that names a thread a session owns (a journal a wrong settle
// left) is neither listed nor archived (issue 22, point 2: ownership is
// checked before any archive).
func TestCleanOrphansChecksOwnershipBeforeArchive(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.st.Session(defaultParent())
	e.insertEntry("req-wrong", forkjournal.StateOrphaned, parentThread)
	e.insertEntry("req-true", forkjournal.StateOrphaned, "thr-orphan")
	orphans, err := fork.ListOrphans(e.ctx, e.st.Store)
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, o := range orphans {
		listed = append(listed, o.ProviderThreadID)
	}
	if !slices.Equal(listed, []string{"thr-orphan"}) {
		t.Errorf("listed %v, want only thr-orphan", listed)
	}
	if _, err := e.svc.CleanOrphans(e.ctx, 5*time.Minute); err != nil {
		t.Fatal(err)
	}
	if got := e.rt.Archived(); !slices.Equal(got, []string{"thr-orphan"}) {
		t.Errorf("archived %v, want only thr-orphan (the parent's thread is a session's)", got)
	}
	if j := e.journal("req-wrong")[0]; j.State != forkjournal.StateFailed || j.ChildProviderSessionID != "" {
		t.Errorf("req-wrong: %s %q, want failed with no thread", j.State, j.ChildProviderSessionID)
	}
}
