package gitrepo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// crashChildEnv makes the test binary an apply that kills itself with
// SIGKILL at a step (TestMain): its value is a crashChild in JSON.
const crashChildEnv = "TUTTID_GITREPO_APPLY_CRASH"

type crashChild struct {
	Repo, Dest, Base string
	// KillAt is the step (ApplyStep.N) before which the process dies.
	KillAt int
	// Journal is the file fileJournal keeps the write in.
	Journal string
}

func TestMain(m *testing.M) {
	if spec := os.Getenv(crashChildEnv); spec != "" {
		os.Exit(runCrashChild(spec))
	}
	os.Exit(m.Run())
}

func runCrashChild(spec string) int {
	var c crashChild
	if err := json.Unmarshal([]byte(spec), &c); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx := context.Background()
	g := New(Config{Bin: gitBin})
	parent, err := g.Open(ctx, c.Repo)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	child, err := g.Open(ctx, c.Dest)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	_, err = parent.ApplyWith(ctx, child, c.Base, ApplyOptions{Journal: fileJournal(c.Journal), Step: func(s ApplyStep) error {
		if s.N == c.KillAt {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
		return nil
	}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// fileJournal keeps the write and its state in one file, replaced
// whole at each record (as a database row is).
type fileJournal string

type journalEntry struct {
	Write ApplyWrite
	State ApplyState
}

func (j fileJournal) Record(_ context.Context, w ApplyWrite, s ApplyState) error {
	b, err := json.Marshal(journalEntry{w, s})
	if err != nil {
		return err
	}
	tmp := string(j) + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, string(j))
}

func (j fileJournal) Forget(context.Context, ApplyWrite) error { return os.Remove(string(j)) }

// TestApplyKilledAtEveryStep kills a process applying (SIGKILL, from the
// apply's step hook) before each of the write's steps in turn, then
// settles what its journal says as the next start does: the parent's
// files are as they were each time, and nothing is left of the staging.
// The run after the last step is not killed: it applies.
func TestApplyKilledAtEveryStep(t *testing.T) {
	ctx := context.Background()
	g := testGit(t)
	f := newApplyFixture(t, g, filepath.Join(t.TempDir(), "repo"), 0, 0)
	before := checkoutState(t, f.repo)
	for k := 1; ; k++ {
		journal := filepath.Join(t.TempDir(), "journal")
		spec, _ := json.Marshal(crashChild{Repo: f.repo, Dest: f.dest, Base: f.base, KillAt: k, Journal: journal})
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+string(spec))
		out, err := cmd.CombinedOutput()
		if err == nil {
			if k < 12 {
				t.Fatalf("the apply had %d steps, want 12", k-1)
			}
			if _, err := os.Stat(journal); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("journal left after the apply: %v", err)
			}
			f.checkApplied(t)
			checkNoStaging(t, f.parent)
			return
		}
		var exit *exec.ExitError
		if !errors.As(err, &exit) || !exit.Sys().(syscall.WaitStatus).Signaled() {
			t.Fatalf("step %d: the apply failed: %v\n%s", k, err, out)
		}
		b, err := os.ReadFile(journal)
		if err != nil {
			t.Fatalf("step %d: no journal: %v", k, err)
		}
		var e journalEntry
		if err := json.Unmarshal(b, &e); err != nil {
			t.Fatal(err)
		}
		wantState := ApplySwapping
		if k == 1 {
			wantState = ApplyStaging // killed before the first swap
		}
		if e.State != wantState {
			t.Errorf("step %d: journal state %s, want %s", k, e.State, wantState)
		}
		if err := f.parent.SettleApply(ctx, e.Write, e.State); err != nil {
			t.Fatal(err)
		}
		if got := checkoutState(t, f.repo); got != before {
			t.Fatalf("step %d: files after settling:\n%s\nwant\n%s", k, got, before)
		}
		checkNoStaging(t, f.parent)
	}
}
