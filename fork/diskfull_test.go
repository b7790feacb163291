package fork_test

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"tuttid/agent"
	"tuttid/agent/agenttest"
	"tuttid/apperr"
	"tuttid/ent/forkjournal"
	"tuttid/fork"
)

// smallTmpfs mounts a tmpfs of size bytes for the test, or skips where the
// machine does not allow it (not root, no mount).
func smallTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v: %s); the full disk is not simulated", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// A temp disk that fills while the child's history is spooled: the fork
// answers storage_unavailable, the thread is archived and the journal says
// so, and the log names the spool and says the thread was archived, not
// that it is an orphan (issue 22, point 4). Fault: a real full disk, a
// 16 KiB tmpfs.
func TestForkSpoolDiskFullSaysThreadArchived(t *testing.T) {
	t.Parallel()
	dir := smallTmpfs(t, "16k")
	e := newEnv(t)
	e.svc = fork.New(fork.Config{Store: e.st.Store, Sessions: e.sess, Accounts: e.acc, Runtime: e.rt, Logger: e.logger, SpoolDir: dir})
	e.st.Session(defaultParent())
	before := e.counts()
	st := &pageStream{pages: 4, turnsPerPage: 2, textBytes: 64 << 10}
	e.rt.ScriptForks(agenttest.ForkAnswer{Result: agent.RuntimeForkResult{
		Session: agent.RuntimeSession{ThreadID: "thread-full", Status: agent.ThreadIdle}, History: st,
	}})
	e.forkErr(input("req-full"), apperr.StorageUnavailable)

	if after := e.counts(); after != before {
		t.Errorf("rows changed: before %+v, after %+v", before, after)
	}
	rows := e.journal("req-full")
	if len(rows) != 1 || rows[0].State != forkjournal.StateArchived || rows[0].ChildProviderSessionID != "thread-full" {
		t.Fatalf("journal %+v, want one archived entry for thread-full", rows)
	}
	if got := e.rt.Archived(); !slices.Equal(got, []string{"thread-full"}) {
		t.Errorf("archived %v, want [thread-full]", got)
	}
	var logged bool
	for _, rec := range e.logs.Records(t) {
		msg, _ := rec["msg"].(string)
		if rec["orphan_thread"] != "thread-full" || rec["level"] != "ERROR" {
			continue
		}
		logged = true
		if strings.Contains(msg, "(orphan)") || strings.Contains(msg, "not archived") {
			t.Errorf("the log calls an archived thread an orphan: %q", msg)
		}
		if !strings.Contains(msg, "thread archived") || !strings.Contains(msg, dir) {
			t.Errorf("the log does not say the spool in %s failed and the thread was archived: %q", dir, msg)
		}
	}
	if !logged {
		t.Errorf("no error record names thread-full; logs: %v", e.logs.Records(t))
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("spool dir after the fork: %v %v, want empty", entries, err)
	}
}
