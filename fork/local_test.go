package fork_test

import (
	"path/filepath"
	"testing"

	"tuttid/agent"
	"tuttid/agent/agenttest"
	"tuttid/apperr"
	"tuttid/ent/forkjournal"
	"tuttid/fork"
)

// localStream is a history the runtime already spooled to local disk
// (the codex runtime's streamed fork reply): pageStream's pages.
type localStream struct{ *pageStream }

func (localStream) OnLocalDisk() bool { return true }

// TestForkDoesNotSpoolLocalHistoryAgain: a history the runtime spooled
// itself is read straight in the child's transaction, never copied to the
// service's spool (here a directory that does not exist, where spooling
// would fail): stored whole, in order, one page at a time, and closed.
func TestForkDoesNotSpoolLocalHistoryAgain(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.svc = fork.New(fork.Config{Store: e.st.Store, Sessions: e.sess, Accounts: e.acc, Runtime: e.rt, Logger: e.logger,
		SpoolDir: filepath.Join(t.TempDir(), "missing")})
	e.st.Session(defaultParent())
	st := localStream{&pageStream{pages: 3, turnsPerPage: 2}}
	e.rt.ScriptForks(agenttest.ForkAnswer{Result: agent.RuntimeForkResult{
		Session: agent.RuntimeSession{ThreadID: "thread-local", Status: agent.ThreadIdle}, History: st,
	}})
	res := e.mustFork(input("req-local"))
	msgs := e.messages(res.Session.ID)
	if len(msgs) != 3*2*2 || msgs[0].Version != 1 || msgs[len(msgs)-1].Version != 12 {
		t.Fatalf("child has %d messages, want 12, versions 1..12", len(msgs))
	}
	if msgs[0].MessageID != "stream-p001-t0-user" || msgs[11].MessageID != "stream-p003-t1-assistant" {
		t.Errorf("messages out of order: first %s, last %s", msgs[0].MessageID, msgs[11].MessageID)
	}
	if src := res.Session.RuntimeContext["forkMessageSource"]; src != fork.SourceProviderTurns {
		t.Errorf("history from %v, want the provider's", src)
	}
	if st.served != 3 || st.overlap || !st.closed {
		t.Errorf("pages served %d (overlapping: %t, closed: %t), want 3 one at a time, closed", st.served, st.overlap, st.closed)
	}
}

// TestForkLocalHistoryReadFailureIsStorageUnavailable: failing to read a
// runtime's local spool back is a failure of tuttid's storage, as for the
// service's own spool: no fallback to the parent's cache, nothing stored,
// storage_unavailable, the thread archived.
func TestForkLocalHistoryReadFailureIsStorageUnavailable(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.st.Session(defaultParent())
	before := e.counts()
	st := localStream{&pageStream{pages: 3, turnsPerPage: 2, failAt: 2}}
	e.rt.ScriptForks(agenttest.ForkAnswer{Result: agent.RuntimeForkResult{
		Session: agent.RuntimeSession{ThreadID: "thread-local-bad", Status: agent.ThreadIdle}, History: st,
	}})
	e.forkErr(input("req-local-bad"), apperr.StorageUnavailable)
	if after := e.counts(); after != before {
		t.Errorf("rows changed: before %+v, after %+v", before, after)
	}
	rows := e.journal("req-local-bad")
	if len(rows) != 1 || rows[0].State != forkjournal.StateArchived || rows[0].ChildProviderSessionID != "thread-local-bad" {
		t.Fatalf("journal %+v, want one archived entry", rows)
	}
}
