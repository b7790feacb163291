package fork_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"tuttid/agent"
	"tuttid/agent/agenttest"
	"tuttid/apperr"
	"tuttid/ent/forkjournal"
	"tuttid/fork"
)

// TestForkSpoolFailureIsStorageUnavailable: when tuttid cannot write its
// own spool file, the provider did nothing wrong: the fork does not fall
// back to the parent's cache but fails with storage_unavailable, the
// journal records the orphan, its thread is archived, the log says the
// local disk failed, and nothing is stored.
func TestForkSpoolFailureIsStorageUnavailable(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.svc = fork.New(fork.Config{Store: e.st.Store, Sessions: e.sess, Accounts: e.acc, Runtime: e.rt, Logger: e.logger,
		SpoolDir: filepath.Join(t.TempDir(), "missing")})
	e.st.Session(defaultParent())
	before := e.counts()
	st := &pageStream{pages: 2, turnsPerPage: 2}
	e.rt.ScriptForks(agenttest.ForkAnswer{Result: agent.RuntimeForkResult{
		Session: agent.RuntimeSession{ThreadID: "thread-spool", Status: agent.ThreadIdle}, History: st,
	}})
	e.forkErr(input("req-spool"), apperr.StorageUnavailable)

	if after := e.counts(); after != before {
		t.Errorf("rows changed: before %+v, after %+v", before, after)
	}
	rows := e.journal("req-spool")
	if len(rows) != 1 || rows[0].State != forkjournal.StateArchived || rows[0].ChildProviderSessionID != "thread-spool" {
		t.Fatalf("journal %+v, want one archived entry for thread-spool", rows)
	}
	if got := e.rt.Archived(); !slices.Equal(got, []string{"thread-spool"}) {
		t.Errorf("archived %v, want [thread-spool]", got)
	}
	if !st.closed {
		t.Errorf("the provider's stream was not closed")
	}
	var logged bool
	for _, rec := range e.logs.Records(t) {
		msg, _ := rec["msg"].(string)
		if strings.Contains(msg, "provider's history stream failed") {
			t.Errorf("a spool failure was logged as the provider's: %v", rec)
		}
		if strings.Contains(msg, "spooled to local disk") && rec["orphan_thread"] == "thread-spool" {
			logged = true
		}
	}
	if !logged {
		t.Errorf("no log record says the spool failed; logs: %v", e.logs.Records(t))
	}
}
