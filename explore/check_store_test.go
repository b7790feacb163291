package explore

import (
	"context"
	"testing"
	"time"

	"tuttid/ent"
	"tuttid/ent/checkrun"
	"tuttid/logtest"
	"tuttid/shellrun"
	"tuttid/store/storetest"
)

// touchOnly is the Code a check's end uses: Touched.
type touchOnly struct{ Code }

func (touchOnly) Touched(string) {}

// TestCheckEndStoredOnceTheStoreTakesWrites: a check whose result the
// store refuses (a full disk: every update of its table fails) is not
// left RUNNING: its result is stored once the store takes writes again,
// without a restart; a service closed first gives up (the next start
// runs the check again).
func TestCheckEndStoredOnceTheStoreTakesWrites(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	st.Workspace(storetest.Workspace{ID: "w"})
	st.Session(storetest.Session{ID: "s", Workspace: "w"})
	s := New(Config{Store: st.Store, Code: touchOnly{}, Logger: logtest.Discard(), InstanceID: "i"})
	t.Cleanup(s.Close)
	x, err := st.Client.Exploration.Create().SetID("x").SetWorkspaceID("w").SetParentAgentSessionID("s").
		SetRequestID("r").SetFingerprint("f").SetCheckCommand("true").SetCheckTimeoutMs(1000).Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	newRow := func(id string) *ent.CheckRun {
		row, err := st.Client.CheckRun.Create().SetID(id).SetWorkspaceID("w").SetAgentSessionID("s").SetTurnID(id).
			SetExplorationID("x").Save(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return row
	}

	row := newRow("c1")
	heal, err := storetest.FailWrites(ctx, st.Store, "full_disk", "UPDATE", "workspace_agent_check_runs", "")
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		s.endCheck(ctx, x, row, shellrun.Result{ExitCode: 0, Output: "ok\n"}, nil)
	}()
	time.Sleep(300 * time.Millisecond) // several refused attempts
	if got, _ := st.Client.CheckRun.Get(ctx, "c1"); got.State != checkrun.StateRunning {
		t.Fatalf("with the store refusing, the check reads %s", got.State)
	}
	if err := heal(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the check's end was not stored within 10 s of the store taking writes again")
	}
	if got, _ := st.Client.CheckRun.Get(ctx, "c1"); got.State != checkrun.StatePassed || got.Output != "ok\n" || got.FinishedAt == nil {
		t.Errorf("the check once stored: %+v", got)
	}

	// Closing while the store still refuses: the retries end.
	row = newRow("c2")
	if _, err := storetest.FailWrites(ctx, st.Store, "full_disk_again", "UPDATE", "workspace_agent_check_runs", ""); err != nil {
		t.Fatal(err)
	}
	ended = make(chan struct{})
	go func() {
		defer close(ended)
		s.endCheck(ctx, x, row, shellrun.Result{ExitCode: 1}, nil)
	}()
	time.Sleep(100 * time.Millisecond)
	s.Close()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the retries outlived the service")
	}
}

// TestStopEndsACheckNothingRuns: a check row left RUNNING by a run that
// gave up (tuttid stopped while the store refused its end) is ended by the
// stop (INTERRUPTED); one this process runs is cancelled instead, its row
// left to its own end.
func TestStopEndsACheckNothingRuns(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	st.Workspace(storetest.Workspace{ID: "w"})
	st.Session(storetest.Session{ID: "s", Workspace: "w"})
	st.Session(storetest.Session{ID: "live", Workspace: "w"})
	s := New(Config{Store: st.Store, Code: touchOnly{}, Logger: logtest.Discard(), InstanceID: "i"})
	t.Cleanup(s.Close)
	for _, id := range []string{"s", "live"} {
		if _, err := st.Client.CheckRun.Create().SetID("c-" + id).SetWorkspaceID("w").SetAgentSessionID(id).SetTurnID("t").Save(ctx); err != nil {
			t.Fatal(err)
		}
	}
	cancelled := false
	defer s.checks.track("live", func() { cancelled = true })()

	for _, id := range []string{"s", "live"} {
		if s.checks.stop(id) == nil {
			if err := s.endStale(ctx, id); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got, _ := st.Client.CheckRun.Get(ctx, "c-s"); got.State != checkrun.StateInterrupted || got.FinishedAt == nil {
		t.Errorf("the check nothing runs: %s, want INTERRUPTED with an end", got.State)
	}
	if got, _ := st.Client.CheckRun.Get(ctx, "c-live"); got.State != checkrun.StateRunning || !cancelled {
		t.Errorf("the running check: %s (cancelled %v), want RUNNING until its own end, cancelled", got.State, cancelled)
	}
}
