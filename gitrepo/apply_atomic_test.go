package gitrepo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// errDiskFull is what the file system answers a write on a full disk.
var errDiskFull = &os.PathError{Op: "write", Path: "f", Err: syscall.ENOSPC}

// TestApplyAllOrNothing fails the write at each of its steps in turn (the
// merged files staged, each of the parent's files moved aside, each
// merged file moved in) as a full disk would: every time, the parent's
// files are as they were byte for byte (the person's uncommitted edits,
// the untracked and the ignored file, modes, directories), nothing is
// left of the staging, and the error names the ref that keeps the state
// before. The applies that failed keep at most KeptApplies states.
// Last, the same apply without a fault writes it all.
func TestApplyAllOrNothing(t *testing.T) {
	ctx := context.Background()
	g := testGit(t)
	f := newApplyFixture(t, g, filepath.Join(t.TempDir(), "repo"), 0, 0)
	before := checkoutState(t, f.repo)
	person := captureState(t, f.repo)
	keptA := gitT(t, f.repo, "hash-object", "a.txt")

	// A dry count of the steps of this apply.
	var steps []ApplyStep
	count := func(s ApplyStep) error { steps = append(steps, s); return errDiskFull }
	if _, err := f.parent.ApplyWith(ctx, f.child, f.base, ApplyOptions{Step: count}); err == nil {
		t.Fatal("the count's apply did not fail")
	}
	steps = steps[:0]
	probe := &recordingJournal{}
	if _, err := f.parent.ApplyWith(ctx, f.child, f.base, ApplyOptions{Journal: probe, Step: func(s ApplyStep) error {
		steps = append(steps, s)
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	f.checkApplied(t)
	var ops []string
	for _, s := range steps {
		ops = append(ops, string(s.Op)+" "+s.Path)
	}
	want := []string{"stage ", "aside a.txt", "aside dir/b.txt", "aside m.sh", "aside x",
		"place a.txt", "place link", "place m.sh", "place new/deep/c.txt", "place run.sh", "place x/y", "check "}
	if !slices.Equal(ops, want) {
		t.Fatalf("steps %q\nwant  %q", ops, want)
	}
	if !slices.Equal(probe.states, []ApplyState{ApplyStaging, ApplySwapping, ApplyDone}) || !probe.forgot {
		t.Fatalf("journal %v, forgotten %v", probe.states, probe.forgot)
	}
	// Back to the parent's files before, by hand from the kept ref, as
	// the error tells a person to.
	kept := probe.write.KeptRef
	gitT(t, f.repo, "restore", "--source="+kept, "--worktree", "--", ".")
	runShell(t, f.repo, "rm -rf new x run.sh link && git show "+kept+":x > x")
	if got := checkoutState(t, f.repo); got != before {
		t.Fatalf("restored by hand from %s:\n%s\nwant\n%s", kept, got, before)
	}

	for k := 1; k <= len(want); k++ {
		t.Run(want[k-1], func(t *testing.T) {
			j := &recordingJournal{}
			res, err := f.parent.ApplyWith(ctx, f.child, f.base, ApplyOptions{Journal: j, Step: func(s ApplyStep) error {
				if s.N == k {
					return errDiskFull
				}
				return nil
			}})
			var ae *ApplyError
			if !errors.As(err, &ae) || !errors.Is(err, ErrApplyWrite) {
				t.Fatalf("apply = %+v, %v; want an *ApplyError", res, err)
			}
			if !ae.DiskFull || len(ae.NotRestored) > 0 {
				t.Errorf("disk full %v, not restored %v", ae.DiskFull, ae.NotRestored)
			}
			if !strings.HasPrefix(ae.KeptRef, defaultKeepUnder) || !strings.Contains(err.Error(), ae.KeptRef) ||
				!strings.Contains(err.Error(), ae.KeptCommit) {
				t.Errorf("the error does not name the kept state: %v", err)
			}
			if got := gitT(t, f.repo, "rev-parse", ae.KeptRef); got != ae.KeptCommit {
				t.Errorf("%s names %s, want %s", ae.KeptRef, got, ae.KeptCommit)
			}
			// The kept state has the person's edit and untracked file.
			if got := gitT(t, f.repo, "rev-parse", ae.KeptCommit+":a.txt"); got != keptA {
				t.Errorf("kept a.txt is %s, want the person's %s", got, keptA)
			}
			gitT(t, f.repo, "cat-file", "-e", ae.KeptCommit+":untracked.txt")
			if got := checkoutState(t, f.repo); got != before {
				t.Errorf("files after a failure at step %d:\n%s\nwant\n%s", k, got, before)
			}
			assertStateUnchanged(t, person, f.repo)
			checkNoStaging(t, f.parent)
			if !j.forgot {
				t.Errorf("journal entry kept after an undo that worked (%v)", j.states)
			}
		})
	}
	if refs, _ := f.parent.Refs(ctx, defaultKeepUnder); len(refs) != KeptApplies {
		t.Errorf("%d kept states, want %d", len(refs), KeptApplies)
	}
	if _, err := f.parent.ApplyWith(ctx, f.child, f.base, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	f.checkApplied(t)
	checkNoStaging(t, f.parent)
}

// TestApplyUndoFailsThenSettles: a write fails and moving a file back
// fails too, and so does writing it from the kept commit: the error names
// the path and the kept state, the journal keeps the write (not
// forgotten), and settling it (what the next start does) puts every file
// back.
func TestApplyUndoFailsThenSettles(t *testing.T) {
	ctx := context.Background()
	g := testGit(t)
	f := newApplyFixture(t, g, filepath.Join(t.TempDir(), "repo"), 0, 0)
	before := checkoutState(t, f.repo)
	for _, tc := range []struct {
		name string
		// fails: the steps that fail.
		fails func(s ApplyStep) bool
		// notRestored: the paths left otherwise.
		notRestored []string
	}{
		{"moving back fails, the kept commit serves", func(s ApplyStep) bool {
			return (s.Op == StepPlace && s.Path == "m.sh") || (s.Op == StepRestore && s.Path == "a.txt")
		}, nil},
		{"moving back and the kept commit fail", func(s ApplyStep) bool {
			return (s.Op == StepPlace && s.Path == "x/y") || (s.Path == "a.txt" && (s.Op == StepRestore || s.Op == StepFromKept))
		}, []string{"a.txt"}},
		{"a file written cannot be removed", func(s ApplyStep) bool {
			return (s.Op == StepPlace && s.Path == "x/y") || (s.Op == StepUnplace && s.Path == "run.sh")
		}, []string{"run.sh"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := &recordingJournal{}
			_, err := f.parent.ApplyWith(ctx, f.child, f.base, ApplyOptions{Journal: j, Step: func(s ApplyStep) error {
				if tc.fails(s) {
					return errDiskFull
				}
				return nil
			}})
			var ae *ApplyError
			if !errors.As(err, &ae) {
				t.Fatalf("err %v, want an *ApplyError", err)
			}
			if !slices.Equal(ae.NotRestored, tc.notRestored) {
				t.Fatalf("not restored %v, want %v (%v)", ae.NotRestored, tc.notRestored, err)
			}
			if tc.notRestored == nil {
				if got := checkoutState(t, f.repo); got != before || !j.forgot {
					t.Fatalf("files (forgotten %v):\n%s\nwant\n%s", j.forgot, got, before)
				}
				checkNoStaging(t, f.parent)
				return
			}
			for _, p := range tc.notRestored {
				if !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), ae.KeptRef) {
					t.Errorf("error %q does not name %s and the kept ref", err, p)
				}
			}
			if j.forgot || j.states[len(j.states)-1] != ApplySwapping {
				t.Fatalf("journal %v forgotten %v: the next start would not settle it", j.states, j.forgot)
			}
			// The next start settles it, twice over if need be.
			for range 2 {
				if err := f.parent.SettleApply(ctx, j.write, ApplySwapping); err != nil {
					t.Fatal(err)
				}
			}
			if got := checkoutState(t, f.repo); got != before {
				t.Fatalf("files after settling:\n%s\nwant\n%s", got, before)
			}
			checkNoStaging(t, f.parent)
		})
	}
}

// TestApplyJournalFailure: a journal that cannot record a state stops
// the write with the files as they were.
func TestApplyJournalFailure(t *testing.T) {
	ctx := context.Background()
	g := testGit(t)
	f := newApplyFixture(t, g, filepath.Join(t.TempDir(), "repo"), 0, 0)
	before := checkoutState(t, f.repo)
	for _, state := range []ApplyState{ApplyStaging, ApplySwapping, ApplyDone} {
		t.Run(string(state), func(t *testing.T) {
			_, err := f.parent.ApplyWith(ctx, f.child, f.base, ApplyOptions{Journal: &recordingJournal{failAt: state}})
			if !errors.Is(err, ErrApplyWrite) {
				t.Fatalf("err %v, want ErrApplyWrite", err)
			}
			if got := checkoutState(t, f.repo); got != before {
				t.Fatalf("files:\n%s\nwant\n%s", got, before)
			}
			checkNoStaging(t, f.parent)
		})
	}
}

// TestApplyRefusesWritingThroughAFile: an added file whose directory is
// an ignored file, or an ignored symlink, is a conflict: nothing is
// written (git would replace the file, or write where the link points).
func TestApplyRefusesWritingThroughAFile(t *testing.T) {
	ctx := context.Background()
	g := testGit(t)
	for _, tc := range []struct {
		name    string
		blocker func(t *testing.T, repo string)
	}{
		{"a file", func(t *testing.T, repo string) { writeFile(t, filepath.Join(repo, "out.log"), "mine\n") }},
		{"a symlink", func(t *testing.T, repo string) {
			if err := os.MkdirAll(filepath.Join(repo, "elsewhere"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("elsewhere", filepath.Join(repo, "out.log")); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := newRepo(t)
			parent := openRepo(t, g, repo)
			base, err := parent.Checkpoint(ctx, CheckpointOptions{Ref: SessionRef("child", "base")})
			if err != nil {
				t.Fatal(err)
			}
			dest := filepath.Join(t.TempDir(), "child")
			if _, err := parent.CreateWorktree(ctx, WorktreeOptions{Checkpoint: base.Commit, Path: dest}); err != nil {
				t.Fatal(err)
			}
			// The child's out.log/f is forced in: ignored in the parent.
			writeFile(t, filepath.Join(dest, "out.log", "f"), "child\n")
			gitT(t, dest, "add", "-f", "out.log/f")
			tc.blocker(t, repo)
			before := captureState(t, repo)
			res, err := parent.Apply(ctx, openRepo(t, g, dest), base.Commit, false)
			if err != nil {
				t.Fatal(err)
			}
			if res.Applied || !slices.Equal(res.Conflicts, []string{"out.log/f"}) {
				t.Fatalf("apply = %+v", res)
			}
			assertStateUnchanged(t, before, repo)
			if _, err := os.Lstat(filepath.Join(repo, "elsewhere", "f")); err == nil {
				t.Fatal("written through the symlink")
			}
		})
	}
}
