package fork_test

import (
	"testing"
	"time"

	"tuttid/agent"
	"tuttid/agent/agenttest"
	"tuttid/store"
)

// TestForkLeavesNoReaderAndCheckpoints: the read that keeps SQLite's
// checkpoint out of the child's commit ends with the fork, and the WAL the
// fork wrote is then checkpointed: a TRUNCATE checkpoint (which waits for
// no reader may still use the WAL) succeeds with every page copied.
func TestForkLeavesNoReaderAndCheckpoints(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if e.st.Dialect() != store.SQLite {
		t.Skip("SQLite's WAL only")
	}
	e.st.Session(defaultParent())
	e.rt.ScriptForks(agenttest.ForkAnswer{Result: agent.RuntimeForkResult{
		Session: agent.RuntimeSession{ThreadID: "thread-ckpt", Status: agent.ThreadIdle},
		History: &pageStream{pages: 4, turnsPerPage: 2, textBytes: 256 << 10},
	}})
	e.mustFork(input("req-ckpt"))
	deadline := time.Now().Add(10 * time.Second)
	for {
		var busy, log, done int
		if err := e.st.DB.QueryRow("PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &log, &done); err != nil {
			t.Fatal(err)
		}
		if busy == 0 && log == done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("WAL not checkpointed after the fork: busy %d, %d pages, %d copied", busy, log, done)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
