package codebranch_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"tuttid/apperr"
	"tuttid/codebranch"
	"tuttid/ent"
	"tuttid/ent/applyjournal"
	"tuttid/gitrepo"
	"tuttid/gitrepo/gittest"
)

// applyCase is a parent with the person's uncommitted edit in a file the
// apply changes too, an untracked file and an ignored one, and a WORKTREE
// child whose changes since its fork touch several files: modified, added
// in a new directory (one executable), deleted.
type applyCase struct {
	k             *kit
	repo          string
	parent, child *ent.AgentSession
}

func newApplyCase(t *testing.T) applyCase {
	k := newKit(t)
	repo := newRepo(t)
	parent := k.session("p", repo)
	k.svc.SessionStarted(k.ctx, parent)
	t1 := k.endTurn(parent, "turn-1")
	child := k.worktreeChild(parent, "c", t1.CheckpointCommit)
	row, _ := k.svc.Row(k.ctx, child.ID)
	wt := row.RepositoryRoot
	writeFile(t, filepath.Join(wt, "a.txt"), "a1\na2\nchild a3\n")
	writeFile(t, filepath.Join(wt, "b.txt"), "b1\nchild\nb3\n")
	writeFile(t, filepath.Join(wt, "tools", "run.sh"), "#!/bin/sh\necho run\n")
	if err := os.Chmod(filepath.Join(wt, "tools", "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(wt, "staged.txt")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(repo, "a.txt"), "person a1\na2\na3\n")
	writeFile(t, filepath.Join(repo, "notes.txt"), "the person's untracked notes\n")
	return applyCase{k: k, repo: repo, parent: parent, child: child}
}

// withApplyStep is a Service over the same store and data directory whose
// applies ask step before each file step.
func (c applyCase) withApplyStep(step func(gitrepo.ApplyStep) error) *codebranch.Service {
	svc := codebranch.New(codebranch.Config{Store: c.k.st.Store, Git: gitrepo.New(gitrepo.Config{Bin: gitBin}),
		DataDir: c.k.data, Publisher: c.k.pub, ApplyStep: step})
	// The applied checkpoint refreshes a kept index in the background:
	// done before the test's directories go.
	c.k.t.Cleanup(func() { svc.Wait(context.Background()) })
	return svc
}

func (c applyCase) checkApplied(t *testing.T) {
	t.Helper()
	for path, want := range map[string]string{"a.txt": "person a1\na2\nchild a3\n", "b.txt": "b1\nchild\nb3\n",
		"notes.txt": "the person's untracked notes\n", "tools/run.sh": "#!/bin/sh\necho run\n", "debug.log": "ignored\n"} {
		if b, _ := os.ReadFile(filepath.Join(c.repo, path)); string(b) != want {
			t.Errorf("%s = %q, want %q", path, b, want)
		}
	}
	if fi, err := os.Stat(filepath.Join(c.repo, "tools", "run.sh")); err != nil || fi.Mode()&0o111 == 0 {
		t.Errorf("run.sh not executable: %v %v", fi, err)
	}
	if _, err := os.Stat(filepath.Join(c.repo, "staged.txt")); err == nil {
		t.Error("staged.txt still there")
	}
}

// journal lists the apply journal's rows.
func (c applyCase) journal(t *testing.T) []*ent.ApplyJournal {
	t.Helper()
	rows, err := c.k.st.Client.ApplyJournal.Query().All(c.k.ctx)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestApplyDiskFullAtEveryStep fails the apply's write at each of its file
// steps in turn, as a full disk does: each answers storage_unavailable
// naming the commit and the ref that keep the parent's files before, the
// parent's files are byte for byte as they were (the person's edit, the
// untracked and ignored files, modes), the person's index and refs
// unchanged, nothing published, no applied commit recorded, and the
// journal empty. The first apply past the last step goes through.
func TestApplyDiskFullAtEveryStep(t *testing.T) {
	c := newApplyCase(t)
	before := gittest.Files(t, c.repo)
	person := personState(t, c.repo)
	failAt := 0
	svc := c.withApplyStep(func(s gitrepo.ApplyStep) error {
		if s.N == failAt {
			return &os.PathError{Op: "write", Path: s.Path, Err: syscall.ENOSPC}
		}
		return nil
	})
	for failAt = 1; ; failAt++ {
		_, err := svc.Apply(c.k.ctx, c.child, c.parent, false)
		if err == nil {
			break
		}
		if apperr.CodeOf(err) != apperr.StorageUnavailable {
			t.Fatalf("step %d: err %v, want %s", failAt, err, apperr.StorageUnavailable)
		}
		msg := err.(*apperr.Error).Message
		if !strings.Contains(msg, "the disk is full") || !strings.Contains(msg, "nothing was changed") ||
			!strings.Contains(msg, gitrepo.BeforeApplyRefPrefix(c.parent.ID)) {
			t.Errorf("step %d: message %q", failAt, msg)
		}
		if got := gittest.Files(t, c.repo); got != before {
			t.Fatalf("step %d: files\n%s\nwant\n%s", failAt, got, before)
		}
		if got := personState(t, c.repo); got != person {
			t.Fatalf("step %d: the person's repository changed", failAt)
		}
		if rows := c.journal(t); len(rows) != 0 {
			t.Fatalf("step %d: journal %v", failAt, rows)
		}
		if len(c.k.pub.Events()) != 0 {
			t.Fatalf("step %d: published %v", failAt, c.k.pub.Kinds())
		}
		if row, _ := c.k.svc.Row(c.k.ctx, c.child.ID); row.AppliedCommit != "" {
			t.Fatalf("step %d: applied commit recorded", failAt)
		}
	}
	// stage, 3 asides (a.txt, b.txt, staged.txt), 3 places, check.
	if failAt != 9 {
		t.Errorf("the apply had %d steps, want 8", failAt-1)
	}
	c.checkApplied(t)
	refs := gitT(t, c.repo, "for-each-ref", "--format=%(refname)", gitrepo.BeforeApplyRefPrefix(c.parent.ID))
	if n := len(strings.Split(refs, "\n")); n != gitrepo.KeptApplies {
		t.Errorf("%d kept states, want %d: %s", n, gitrepo.KeptApplies, refs)
	}
}

// TestApplyCrashThenReconcile stops the apply before each of its file
// steps in turn as a kill -9 would (the goroutine ends there: no undo, no
// deferred cleanup of files or rows), then starts a new Service as the
// next start does: ReconcileApplies puts the parent's files back as they
// were, empties the journal and leaves no staging. Another instance's
// start leaves the entry alone.
func TestApplyCrashThenReconcile(t *testing.T) {
	c := newApplyCase(t)
	before := gittest.Files(t, c.repo)
	person := personState(t, c.repo)
	for stopAt := 1; ; stopAt++ {
		svc := c.withApplyStep(func(s gitrepo.ApplyStep) error {
			if s.N == stopAt {
				runtime.Goexit()
			}
			return nil
		})
		done := make(chan bool)
		go func() {
			finished := false
			defer func() { done <- finished }()
			if _, err := svc.Apply(c.k.ctx, c.child, c.parent, false); err != nil {
				t.Errorf("step %d: %v", stopAt, err)
			}
			finished = true
		}()
		if <-done {
			if stopAt != 9 {
				t.Errorf("the apply had %d steps, want 8", stopAt-1)
			}
			break
		}
		rows := c.journal(t)
		want := applyjournal.StateSwapping
		if stopAt == 1 {
			want = applyjournal.StateStaging // stopped before the first swap
		}
		if len(rows) != 1 || rows[0].State != want {
			t.Fatalf("step %d: journal %v, want one entry %s", stopAt, rows, want)
		}
		other := codebranch.New(codebranch.Config{Store: c.k.st.Store, Git: gitrepo.New(gitrepo.Config{Bin: gitBin}),
			DataDir: c.k.data, InstanceID: "another"})
		if err := other.ReconcileApplies(c.k.ctx); err != nil {
			t.Fatal(err)
		}
		if len(c.journal(t)) != 1 {
			t.Fatalf("step %d: another instance settled this one's apply", stopAt)
		}
		next := codebranch.New(codebranch.Config{Store: c.k.st.Store, Git: gitrepo.New(gitrepo.Config{Bin: gitBin}),
			DataDir: c.k.data})
		if err := next.ReconcileApplies(c.k.ctx); err != nil {
			t.Fatal(err)
		}
		if got := gittest.Files(t, c.repo); got != before {
			t.Fatalf("step %d (%s): files after the start\n%s\nwant\n%s", stopAt, rows[0].State, got, before)
		}
		if got := personState(t, c.repo); got != person {
			t.Fatalf("step %d: the person's repository changed", stopAt)
		}
		if rows := c.journal(t); len(rows) != 0 {
			t.Fatalf("step %d: journal after the start %v", stopAt, rows)
		}
		if left, _ := filepath.Glob(filepath.Join(c.repo, ".git", "tuttid-apply", "*")); len(left) > 0 {
			t.Fatalf("step %d: staging left %v", stopAt, left)
		}
	}
	c.checkApplied(t)
}

// TestApplyUndoFailsThenNextApplySettles: a write fails and a.txt can be
// put back neither by a move nor from the kept commit: the answer says so,
// naming the file and the kept state, and the journal keeps the write.
// The next apply to the parent settles it first (the person's a.txt comes
// back) and then applies.
func TestApplyUndoFailsThenNextApplySettles(t *testing.T) {
	c := newApplyCase(t)
	svc := c.withApplyStep(func(s gitrepo.ApplyStep) error {
		if (s.Op == gitrepo.StepPlace && s.Path == "tools/run.sh") ||
			(s.Path == "a.txt" && (s.Op == gitrepo.StepRestore || s.Op == gitrepo.StepFromKept)) {
			return &os.PathError{Op: "rename", Path: s.Path, Err: syscall.EIO}
		}
		return nil
	})
	_, err := svc.Apply(c.k.ctx, c.child, c.parent, false)
	if apperr.CodeOf(err) != apperr.StorageUnavailable {
		t.Fatalf("err %v, want %s", err, apperr.StorageUnavailable)
	}
	msg := err.(*apperr.Error).Message
	rows := c.journal(t)
	if len(rows) != 1 || !strings.Contains(msg, "could not be put back (a.txt)") || !strings.Contains(msg, rows[0].KeptRef) ||
		!strings.Contains(msg, rows[0].KeptCommit) {
		t.Fatalf("message %q, journal %v", msg, rows)
	}
	if _, err := os.Stat(filepath.Join(c.repo, "a.txt")); err == nil {
		t.Fatal("a.txt is there: the fault did not bite")
	}
	if gitT(t, c.repo, "show", rows[0].KeptCommit+":a.txt") != "person a1\na2\na3" {
		t.Fatal("the kept commit lacks the person's a.txt")
	}
	// A dry run writes nothing and settles nothing.
	if _, err := c.k.svc.Apply(c.k.ctx, c.child, c.parent, true); err != nil {
		t.Fatal(err)
	}
	if len(c.journal(t)) != 1 {
		t.Fatal("a dry run settled the journal")
	}
	res, err := c.k.svc.Apply(c.k.ctx, c.child, c.parent, false)
	if err != nil || !res.Applied {
		t.Fatalf("apply after = %+v, %v", res, err)
	}
	if len(c.journal(t)) != 0 {
		t.Fatal("journal not emptied")
	}
	c.checkApplied(t)
}
