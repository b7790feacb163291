package fork_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"tuttid/agent"
	"tuttid/agent/agenttest"
	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/ent/forkjournal"
	"tuttid/fork"
)

func (e *env) journal(requestID string) []*ent.ForkJournal {
	e.t.Helper()
	rows, err := e.st.Client.ForkJournal.Query().Where(forkjournal.RequestID(requestID)).
		Order(ent.Asc(forkjournal.FieldID)).All(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	return rows
}

// The journal records how each attempt ended, whatever the ending.
func TestForkJournalRecordsEachEnding(t *testing.T) {
	t.Parallel()
	lost := fmt.Errorf("%w: %w", agent.ErrRequestLost, agent.ErrRuntimeUnavailable)
	cases := []struct {
		name      string
		script    *agenttest.ForkAnswer
		listed    []agent.ThreadInfo
		trigger   string // SQL that makes the child's transaction fail
		archive   error  // Archive's answer
		wantCode  apperr.Code
		wantState forkjournal.State
		wantChild string
		archived  []string
	}{
		{name: "completed", wantState: forkjournal.StateDone, wantChild: agenttest.ChildThreadID(1)},
		{name: "provider error", script: &agenttest.ForkAnswer{Err: &agent.ProviderError{Method: "thread/fork", Message: "boom"}},
			wantCode: apperr.ForkProviderFailed, wantState: forkjournal.StateFailed},
		{name: "persistence failed", trigger: `CREATE TRIGGER f BEFORE INSERT ON workspace_agent_session_forks BEGIN SELECT RAISE(ABORT, 'injected'); END;`,
			wantCode: apperr.ForkPersistenceFailed, wantState: forkjournal.StateArchived, wantChild: agenttest.ChildThreadID(1), archived: []string{agenttest.ChildThreadID(1)}},
		{name: "persistence failed, archive failed", trigger: `CREATE TRIGGER f BEFORE INSERT ON workspace_agent_session_forks BEGIN SELECT RAISE(ABORT, 'injected'); END;`,
			archive: errors.New("codex down"), wantCode: apperr.ForkPersistenceFailed, wantState: forkjournal.StateOrphaned, wantChild: agenttest.ChildThreadID(1)},
		{name: "lost, thread made", script: &agenttest.ForkAnswer{Err: lost},
			listed:   []agent.ThreadInfo{{ThreadID: "thread-lost", ForkedFromID: parentThread}},
			wantCode: apperr.ForkProviderFailed, wantState: forkjournal.StateArchived, wantChild: "thread-lost", archived: []string{"thread-lost"}},
		{name: "lost, no thread", script: &agenttest.ForkAnswer{Err: lost},
			wantCode: apperr.ForkProviderFailed, wantState: forkjournal.StateFailed},
		// Codex did not answer in time but lives: it may make the thread
		// later, so the entry stays pending for a later settle.
		{name: "timed out, no thread yet", script: &agenttest.ForkAnswer{Err: fmt.Errorf("%w: %w", agent.ErrRequestLost, context.DeadlineExceeded)},
			wantCode: apperr.ForkProviderFailed, wantState: forkjournal.StatePending},
		{name: "timed out, thread made", script: &agenttest.ForkAnswer{Err: fmt.Errorf("%w: %w", agent.ErrRequestLost, context.DeadlineExceeded)},
			listed:   []agent.ThreadInfo{{ThreadID: "thread-late", ForkedFromID: parentThread}},
			wantCode: apperr.ForkProviderFailed, wantState: forkjournal.StateArchived, wantChild: "thread-late", archived: []string{"thread-late"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			e.st.Session(defaultParent())
			if c.script != nil {
				e.rt.ScriptForks(*c.script)
			}
			e.rt.SetListed(c.listed, nil)
			e.rt.FailArchive(c.archive)
			if c.trigger != "" {
				if _, err := e.st.DB.ExecContext(e.ctx, c.trigger); err != nil {
					t.Fatal(err)
				}
			}
			if c.wantCode == "" {
				e.mustFork(input("req"))
			} else {
				e.forkErr(input("req"), c.wantCode)
			}
			rows := e.journal("req")
			if len(rows) != 1 {
				t.Fatalf("%d journal entries, want 1", len(rows))
			}
			j := rows[0]
			if j.State != c.wantState || j.ChildProviderSessionID != c.wantChild {
				t.Errorf("entry: state %s child %q, want %s %q (error %q)", j.State, j.ChildProviderSessionID, c.wantState, c.wantChild, j.Error)
			}
			if j.ParentAgentSessionID != parentID || j.ParentProviderSessionID != parentThread || j.Cwd != parentCwd || j.Fingerprint == "" {
				t.Errorf("entry does not describe the request: %+v", j)
			}
			if got := e.rt.Archived(); !slices.Equal(got, c.archived) {
				t.Errorf("archived %v, want %v", got, c.archived)
			}
			if c.wantState != forkjournal.StateDone {
				if n := e.counts().Sessions; n != 1 {
					t.Errorf("%d sessions after a failed fork, want only the parent", n)
				}
			}
		})
	}
}

// Nothing reaches the provider unless the journal entry is stored.
func TestForkJournalWriteFailsBeforeProvider(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.st.Session(defaultParent())
	if _, err := e.st.DB.ExecContext(e.ctx, `CREATE TRIGGER f BEFORE INSERT ON workspace_agent_fork_journal BEGIN SELECT RAISE(ABORT, 'injected'); END;`); err != nil {
		t.Fatal(err)
	}
	e.forkErr(input("req"), apperr.StorageUnavailable)
	if n := e.rt.ForkCalls(); n != 0 {
		t.Errorf("provider fork calls = %d, want 0", n)
	}
}

// insertEntry writes a journal entry as a crash would leave it.
func (e *env) insertEntry(requestID string, state forkjournal.State, child string) *ent.ForkJournal {
	e.t.Helper()
	// The fingerprint of input(requestID): a replay of it must match.
	res := e.st.Client.ForkJournal.Create().SetWorkspaceID(wsID).SetRequestID(requestID).
		SetFingerprint(fork.Fingerprint(input(requestID))).SetParentAgentSessionID(parentID).
		SetParentProviderSessionID(parentThread).SetProvider(agent.ProviderCodex).SetCwd(parentCwd).
		SetState(state).SetChildProviderSessionID(child).SetCreatedAt(time.Now().Add(-time.Minute)).
		SetUpdatedAt(time.Now().Add(-time.Minute)).SaveX(e.ctx)
	return res
}

func TestReconcileSettlesUnfinishedEntries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.st.Session(defaultParent())
	e.insertEntry("r-before", forkjournal.StatePending, "")         // crashed before Codex: nothing made
	e.insertEntry("r-during", forkjournal.StatePending, "")         // crashed while Codex forked: found by listing
	e.insertEntry("r-answered", forkjournal.StateForked, "thr-ans") // crashed before the commit
	done := e.insertEntry("r-done", forkjournal.StateDone, "thr-done")
	e.rt.SetListed([]agent.ThreadInfo{
		{ThreadID: "thr-ans", ForkedFromID: parentThread}, // claimed by r-answered
		{ThreadID: "thr-during", ForkedFromID: parentThread},
		{ThreadID: "thr-other", ForkedFromID: "another-parent"},
	}, nil)

	if err := e.svc.Reconcile(e.ctx); err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		state forkjournal.State
		child string
	}{
		"r-before":   {forkjournal.StateFailed, ""},
		"r-answered": {forkjournal.StateArchived, "thr-ans"},
		"r-done":     {forkjournal.StateDone, "thr-done"},
	}
	// The two pending entries both saw thr-during; the first settled takes it.
	for req, w := range want {
		j := e.journal(req)[0]
		if req == "r-before" {
			if j.State != forkjournal.StateArchived || j.ChildProviderSessionID != "thr-during" {
				t.Errorf("%s: %s %q, want the oldest unclaimed fork archived", req, j.State, j.ChildProviderSessionID)
			}
			continue
		}
		if j.State != w.state || j.ChildProviderSessionID != w.child {
			t.Errorf("%s: %s %q, want %s %q", req, j.State, j.ChildProviderSessionID, w.state, w.child)
		}
	}
	if j := e.journal("r-during")[0]; j.State != forkjournal.StateFailed {
		t.Errorf("r-during: %s %q, want failed (its only candidate went to an older entry)", j.State, j.ChildProviderSessionID)
	}
	if got := e.rt.Archived(); !slices.Equal(got, []string{"thr-during", "thr-ans"}) {
		t.Errorf("archived %v", got)
	}
	if j, _ := e.st.Client.ForkJournal.Get(e.ctx, done.ID); !j.UpdatedAt.Equal(done.UpdatedAt) || j.State != forkjournal.StateDone {
		t.Errorf("a done entry was touched")
	}
	// Everything archived is listed, with its state.
	orphans, err := fork.ListOrphans(e.ctx, e.st.Store)
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, o := range orphans {
		listed = append(listed, o.ProviderThreadID+" "+o.State+" "+o.RequestID)
	}
	if !slices.Equal(listed, []string{"thr-during archived r-before", "thr-ans archived r-answered"}) {
		t.Errorf("orphans = %q", listed)
	}
}

// A replay of a request a crash cut short settles the old attempt, then
// forks once: one child, and the old thread archived and listed.
func TestReplayAfterCrashGivesOneChild(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.st.Session(defaultParent())
	e.insertEntry("req", forkjournal.StateForked, "thr-crashed")
	res := e.mustFork(input("req"))
	again := e.mustFork(input("req"))
	if !again.Replayed || again.Session.ID != res.Session.ID {
		t.Errorf("second replay: %q replayed %v, want %q", again.Session.ID, again.Replayed, res.Session.ID)
	}
	if n := e.counts().Forks; n != 1 {
		t.Errorf("%d lineage rows, want 1", n)
	}
	rows := e.journal("req")
	if len(rows) != 2 || rows[0].State != forkjournal.StateArchived || rows[1].State != forkjournal.StateDone {
		t.Fatalf("journal: %v", rows)
	}
	if rows[1].ChildProviderSessionID != res.Session.ProviderSessionID {
		t.Errorf("done entry child %q, want %q", rows[1].ChildProviderSessionID, res.Session.ProviderSessionID)
	}
	if got := e.rt.Archived(); !slices.Equal(got, []string{"thr-crashed"}) {
		t.Errorf("archived %v", got)
	}
}

// When the old attempt cannot be settled (the provider is down), the
// replay fails with a fork code instead of forking a second thread.
func TestReplayOfUnsettledAttemptFails(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.st.Session(defaultParent())
	e.insertEntry("req", forkjournal.StatePending, "")
	e.rt.SetListed(nil, fmt.Errorf("%w: down", agent.ErrRuntimeUnavailable))
	e.forkErr(input("req"), apperr.ForkPersistenceFailed)
	if n := e.rt.ForkCalls(); n != 0 {
		t.Errorf("provider fork calls = %d, want 0", n)
	}
	// Other parameters under the same id still conflict.
	in := input("req")
	in.Title = ptr("other")
	e.forkErr(in, apperr.ForkRequestConflict)
}

func TestCleanOrphansArchivesAndRecords(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.st.Session(defaultParent())
	e.insertEntry("r1", forkjournal.StateOrphaned, "thr-1")
	e.insertEntry("r2", forkjournal.StateArchived, "thr-2")
	fresh := e.st.Client.ForkJournal.Create().SetWorkspaceID(wsID).SetRequestID("r3").SetFingerprint("x").
		SetParentAgentSessionID(parentID).SetProvider(agent.ProviderCodex).SetState(forkjournal.StateForked).
		SetChildProviderSessionID("thr-inflight").SaveX(e.ctx)

	cleaned, err := e.svc.CleanOrphans(context.Background(), time.Minute/2)
	if err != nil {
		t.Fatal(err)
	}
	if len(cleaned) != 1 || cleaned[0].ProviderThreadID != "thr-1" || cleaned[0].State != "archived" {
		t.Errorf("cleaned %+v", cleaned)
	}
	if got := e.rt.Archived(); !slices.Equal(got, []string{"thr-1"}) {
		t.Errorf("archived %v (a fork in flight must be left alone)", got)
	}
	if j, _ := e.st.Client.ForkJournal.Get(e.ctx, fresh.ID); j.State != forkjournal.StateForked {
		t.Errorf("in-flight entry is %s", j.State)
	}
	if j := e.journal("r1")[0]; j.State != forkjournal.StateArchived {
		t.Errorf("r1 is %s", j.State)
	}
	// A failing archive is reported and leaves the entry orphaned.
	e.insertEntry("r4", forkjournal.StateOrphaned, "thr-4")
	e.rt.FailArchive(errors.New("codex down"))
	if _, err := e.svc.CleanOrphans(e.ctx, time.Hour); err == nil {
		t.Errorf("clean with a failing archive reported no error")
	}
	if j := e.journal("r4")[0]; j.State != forkjournal.StateOrphaned {
		t.Errorf("r4 is %s", j.State)
	}
}
