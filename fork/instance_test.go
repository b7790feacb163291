package fork_test

import (
	"testing"

	"tuttid/ent/forkjournal"
	"tuttid/fork"
)

// Several instances share the journal: a start settles the entries its
// own instance wrote (its Codex made their threads) and leaves another's,
// whose Codex may still be forking, as they are. New entries carry the
// instance that wrote them.
func TestReconcileSettlesOnlyItsOwnEntries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.st.Session(defaultParent())
	mine := e.insertEntry("r-mine", forkjournal.StateForked, "thr-mine")
	theirs := e.insertEntry("r-theirs", forkjournal.StateForked, "thr-theirs")
	e.st.Client.ForkJournal.UpdateOne(mine).SetInstanceID("a").ExecX(e.ctx)
	e.st.Client.ForkJournal.UpdateOne(theirs).SetInstanceID("b").ExecX(e.ctx)

	svc := fork.New(fork.Config{Store: e.st.Store, Sessions: e.sess, Accounts: e.acc, Runtime: e.rt, Logger: e.logger, InstanceID: "a"})
	if err := svc.Reconcile(e.ctx); err != nil {
		t.Fatal(err)
	}
	if j := e.journal("r-mine")[0]; j.State != forkjournal.StateArchived {
		t.Errorf("a's entry after a's start: %s, want archived", j.State)
	}
	if j := e.journal("r-theirs")[0]; j.State != forkjournal.StateForked {
		t.Errorf("b's entry after a's start: %s, want forked (b settles it)", j.State)
	}

	e.st.Client.AgentSession.UpdateOneID(parentID).SetInstanceID("a").ExecX(e.ctx)
	res, err := svc.Fork(e.ctx, input("r-new"))
	if err != nil {
		t.Fatal(err)
	}
	if j := e.journal("r-new")[0]; j.InstanceID != "a" {
		t.Errorf("new entry written by %q, want a", j.InstanceID)
	}
	if res.Session.InstanceID != "a" || e.session(res.Session.ID).InstanceID != "a" {
		t.Errorf("child owned by %q, want the parent's owner a", res.Session.InstanceID)
	}
}
