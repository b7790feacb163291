package fork_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"tuttid/agent"
	"tuttid/agent/agenttest"
	"tuttid/apperr"
	"tuttid/ent/forkjournal"
	"tuttid/fork"
)

// slowCodex is a live Codex whose thread/fork times out: it answers the
// thread it made only later (OnLateThread, once deliver is closed), and
// its listing, when hang is set, never answers before its context ends.
type slowCodex struct {
	*agenttest.Runtime
	late    string
	deliver chan struct{}
	hang    bool
	unhang  chan struct{} // closed at the test's end
}

func (r *slowCodex) Fork(_ context.Context, in agent.RuntimeForkInput) (agent.RuntimeForkResult, error) {
	if in.OnLateThread != nil && r.late != "" {
		go func() {
			<-r.deliver
			in.OnLateThread(r.late)
		}()
	}
	return agent.RuntimeForkResult{}, fmt.Errorf("%w: codex thread/fork: no reply: %w", agent.ErrRequestLost, context.DeadlineExceeded)
}

func (r *slowCodex) FindForks(ctx context.Context, in agent.FindForksInput) ([]agent.ThreadInfo, error) {
	if r.hang {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-r.unhang:
			return nil, fmt.Errorf("test over")
		}
	}
	return r.Runtime.FindForks(ctx, in)
}

func newSlowCodex(t *testing.T, e *env, late string, hang bool, lostWait time.Duration) *slowCodex {
	r := &slowCodex{Runtime: e.rt, late: late, deliver: make(chan struct{}), hang: hang, unhang: make(chan struct{})}
	t.Cleanup(func() { close(r.unhang) })
	e.svc = fork.New(fork.Config{Store: e.st.Store, Sessions: e.sess, Accounts: e.acc, Runtime: r, Logger: e.logger, LostWait: lostWait})
	return r
}

// The thread a timed-out fork's late reply names is recorded in the
// journal and archived; until then `tuttid orphans` lists the pending
// attempt (issue 22, point 3).
func TestForkTimeoutLateReplyRecordsThread(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.st.Session(defaultParent())
	slow := newSlowCodex(t, e, "thread-late", false, time.Second)
	e.forkErr(input("req"), apperr.ForkProviderFailed)

	j := e.journal("req")[0]
	if j.State != forkjournal.StatePending || j.ChildProviderSessionID != "" {
		t.Fatalf("entry before the late reply: %s %q, want pending", j.State, j.ChildProviderSessionID)
	}
	orphans, err := fork.ListOrphans(e.ctx, e.st.Store)
	if err != nil {
		t.Fatal(err)
	}
	if len(orphans) != 1 || orphans[0].State != "pending" || orphans[0].RequestID != "req" || orphans[0].ProviderThreadID != "" {
		t.Errorf("orphans while pending: %+v, want the pending attempt listed", orphans)
	}

	close(slow.deliver)
	deadline := time.Now().Add(5 * time.Second)
	for {
		j = e.journal("req")[0]
		if j.State == forkjournal.StateArchived || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if j.State != forkjournal.StateArchived || j.ChildProviderSessionID != "thread-late" {
		t.Errorf("entry after the late reply: %s %q (%s), want archived thread-late", j.State, j.ChildProviderSessionID, j.Error)
	}
	if got := e.rt.Archived(); !slices.Equal(got, []string{"thread-late"}) {
		t.Errorf("archived %v, want [thread-late]", got)
	}
}

// The settle after a timeout is bounded as a whole (LostWait), even when a
// thread/list never answers: the person is answered, and the parent's
// lock released, within the stated time (issue 22, point 3).
func TestForkTimeoutSettleIsBounded(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.st.Session(defaultParent())
	const lostWait = 300 * time.Millisecond
	newSlowCodex(t, e, "", true, lostWait)
	done := make(chan error, 1)
	t0 := time.Now()
	go func() {
		_, err := e.svc.Fork(e.ctx, input("req"))
		done <- err
	}()
	select {
	case err := <-done:
		if apperr.CodeOf(err) != apperr.ForkProviderFailed {
			t.Errorf("fork: %v, want fork_provider_failed", err)
		}
		if d := time.Since(t0); d > lostWait+2*time.Second {
			t.Errorf("answered after %s, want within LostWait (%s) and a little", d, lostWait)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("the fork did not answer within 5s with a LostWait of %s: its settle is not bounded", lostWait)
	}
	// The parent is free: a send does not wait on the fork's lock.
	unlocked := make(chan struct{})
	go func() { e.sess.LockSession(parentID)(); close(unlocked) }()
	select {
	case <-unlocked:
	case <-time.After(2 * time.Second):
		t.Fatal("the parent's lock is still held")
	}
	if j := e.journal("req")[0]; j.State != forkjournal.StatePending {
		t.Errorf("entry: %s, want pending (Codex may still make the thread)", j.State)
	}
}
