package codebranch_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"tuttid/activity"
	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/ent/sessioncode"
	"tuttid/gitrepo"
)

// worktreeChild makes what a WORKTREE fork of parent leaves (i24b's fork
// saga makes it for real): a worktree from the parent's last checkpoint
// and the child's code row naming it as base.
func (k *kit) worktreeChild(parent *ent.AgentSession, id, baseCommit string) *ent.AgentSession {
	k.t.Helper()
	prow, err := k.svc.Row(k.ctx, parent.ID)
	if err != nil || prow == nil {
		k.t.Fatalf("parent row: %v", err)
	}
	r, err := gitrepo.New(gitrepo.Config{Bin: gitBin}).Open(k.ctx, prow.RepositoryRoot)
	if err != nil {
		k.t.Fatal(err)
	}
	path := filepath.Join(k.data, "worktrees", "w1", id)
	wt, err := r.CreateWorktree(k.ctx, gitrepo.WorktreeOptions{Checkpoint: baseCommit, Path: path})
	if err != nil {
		k.t.Fatal(err)
	}
	cp, err := r.ReadCheckpoint(k.ctx, baseCommit)
	if err != nil {
		k.t.Fatal(err)
	}
	child := k.session(id, wt.Dir)
	if err := k.st.Client.SessionCode.Create().SetAgentSessionID(id).SetWorkspaceID("w1").
		SetMode(sessioncode.ModeWORKTREE).SetRepositoryRoot(wt.Path).SetCommonDir(r.CommonDir).
		SetWorktreePath(wt.Path).SetWorktreePresent(true).
		SetBaseCommit(cp.Commit).SetBaseHead(cp.Head).SetStartCommit(cp.Commit).Exec(k.ctx); err != nil {
		k.t.Fatal(err)
	}
	return child
}

func TestApply(t *testing.T) {
	k := newKit(t)
	repo := newRepo(t)
	parent := k.session("p", repo)
	k.svc.SessionStarted(k.ctx, parent)
	writeFile(t, filepath.Join(repo, "a.txt"), "a1\na2\na3\nparent turn 1\n")
	t1 := k.endTurn(parent, "turn-1")

	child := k.worktreeChild(parent, "c", t1.CheckpointCommit)
	row, _ := k.svc.Row(k.ctx, child.ID)
	// The child changes b.txt and adds a file; the parent goes on with a.txt.
	writeFile(t, filepath.Join(row.RepositoryRoot, "b.txt"), "b1\nchild\nb3\n")
	writeFile(t, filepath.Join(row.RepositoryRoot, "child.txt"), "from the child\n")
	writeFile(t, filepath.Join(repo, "a.txt"), "a1\na2\na3\nparent turn 1\nparent turn 2\n")
	userIndex, _ := os.ReadFile(filepath.Join(repo, ".git", "index"))

	changes, err := k.svc.Changes(k.ctx, row)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := paths(&changes), []string{"MODIFIED b.txt", "ADDED child.txt"}; !slices.Equal(got, want) {
		t.Fatalf("child changes = %v, want %v", got, want)
	}

	// Either side WORKING: busy, nothing written.
	for _, id := range []string{parent.ID, child.ID} {
		k.setStatus(id, agentsession.StatusWORKING)
		_, err := k.svc.Apply(k.ctx, child, parent, false)
		if apperr.CodeOf(err) != apperr.SessionBusy {
			t.Fatalf("apply while %s works: %v, want %s", id, err, apperr.SessionBusy)
		}
		k.setStatus(id, agentsession.StatusREADY)
	}

	dry, err := k.svc.Apply(k.ctx, child, parent, true)
	if err != nil {
		t.Fatal(err)
	}
	if dry.Applied || len(dry.Conflicts) != 0 || len(dry.Files) != 2 {
		t.Fatalf("dry run = %+v", dry)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "b.txt")); string(b) != "b1\nb2\nb3\n" {
		t.Fatalf("dry run wrote b.txt: %q", b)
	}
	if len(k.pub.Events()) != 0 {
		t.Fatalf("dry run published %v", k.pub.Kinds())
	}

	res, err := k.svc.Apply(k.ctx, child, parent, false)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Applied || len(res.Conflicts) != 0 {
		t.Fatalf("apply = %+v", res)
	}
	for path, want := range map[string]string{
		"a.txt": "a1\na2\na3\nparent turn 1\nparent turn 2\n", "b.txt": "b1\nchild\nb3\n", "child.txt": "from the child\n",
	} {
		if b, _ := os.ReadFile(filepath.Join(repo, path)); string(b) != want {
			t.Fatalf("%s after apply = %q, want %q", path, b, want)
		}
	}
	// Uncommitted: the person's index is the same bytes.
	if idx, _ := os.ReadFile(filepath.Join(repo, ".git", "index")); string(idx) != string(userIndex) {
		t.Fatal("apply wrote the person's index")
	}
	if ev := k.pub.Events(); len(ev) != 1 || ev[0].Kind != activity.SessionUpdated || ev[0].AgentSessionID != parent.ID {
		t.Fatalf("published %v", k.pub.Kinds())
	}
	if row, _ = k.svc.Row(k.ctx, child.ID); row.AppliedCommit == "" {
		t.Fatal("applied_commit not recorded")
	}

	// A conflict: both change the same line; nothing written.
	writeFile(t, filepath.Join(row.RepositoryRoot, "a.txt"), "a1\nchild a2\na3\nparent turn 1\n")
	writeFile(t, filepath.Join(repo, "a.txt"), "a1\nparent a2\na3\nparent turn 1\n")
	res, err = k.svc.Apply(k.ctx, child, parent, false)
	if err != nil {
		t.Fatal(err)
	}
	if res.Applied || !slices.Equal(res.Conflicts, []string{"a.txt"}) {
		t.Fatalf("conflicting apply = %+v", res)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "a.txt")); string(b) != "a1\nparent a2\na3\nparent turn 1\n" {
		t.Fatalf("a conflicting apply wrote a.txt: %q", b)
	}
}

// Bad input: a target in another repository, outside any, or the source
// itself is refused with invalid_input and nothing is written.
func TestApplyRefusals(t *testing.T) {
	k := newKit(t)
	repo := newRepo(t)
	parent := k.session("p", repo)
	k.svc.SessionStarted(k.ctx, parent)
	t1 := k.endTurn(parent, "turn-1")
	child := k.worktreeChild(parent, "c", t1.CheckpointCommit)
	row, _ := k.svc.Row(k.ctx, child.ID)
	writeFile(t, filepath.Join(row.RepositoryRoot, "b.txt"), "child\n")

	other := newRepo(t)
	otherState := personState(t, other)
	cases := []struct {
		name           string
		source, target *ent.AgentSession
	}{
		{"another repository", child, k.session("o", other)},
		{"no repository", child, k.session("n", t.TempDir())},
		{"itself", child, child},
		{"a SHARED source", parent, child},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := k.svc.Apply(k.ctx, tc.source, tc.target, false)
			if apperr.CodeOf(err) != apperr.InvalidInput {
				t.Fatalf("err = %v, want %s", err, apperr.InvalidInput)
			}
		})
	}
	if personState(t, other) != otherState {
		t.Fatal("the other repository changed")
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "b.txt")); string(b) != "b1\nb2\nb3\n" {
		t.Fatalf("b.txt = %q", b)
	}
}

// Compare: both sides' changes from the fork turn's checkpoint, and the
// diff between their files now.
func TestCompare(t *testing.T) {
	k := newKit(t)
	repo := newRepo(t)
	parent := k.session("p", repo)
	k.svc.SessionStarted(k.ctx, parent)
	t1 := k.endTurn(parent, "turn-1")
	c1 := k.worktreeChild(parent, "c1", t1.CheckpointCommit)
	c2 := k.worktreeChild(parent, "c2", t1.CheckpointCommit)
	r1, _ := k.svc.Row(k.ctx, c1.ID)
	r2, _ := k.svc.Row(k.ctx, c2.ID)
	writeFile(t, filepath.Join(r1.RepositoryRoot, "one.txt"), "one\n")
	writeFile(t, filepath.Join(r2.RepositoryRoot, "two.txt"), "two\n")

	cmp, err := k.svc.Compare(k.ctx, c1, c2, parent, "turn-1")
	if err != nil {
		t.Fatal(err)
	}
	if cmp == nil || cmp.Base == nil || cmp.Base.Commit != t1.CheckpointCommit {
		t.Fatalf("comparison base = %+v", cmp)
	}
	if got := paths(&cmp.AChanges); !slices.Equal(got, []string{"ADDED one.txt"}) {
		t.Fatalf("a changes = %v", got)
	}
	if got := paths(&cmp.BChanges); !slices.Equal(got, []string{"ADDED two.txt"}) {
		t.Fatalf("b changes = %v", got)
	}
	if got := paths(&cmp.Diff); !slices.Equal(got, []string{"DELETED one.txt", "ADDED two.txt"}) {
		t.Fatalf("a to b = %v", got)
	}
	// Another repository: no comparison.
	o := k.session("o", newRepo(t))
	k.svc.SessionStarted(k.ctx, o)
	if cmp, err := k.svc.Compare(k.ctx, c1, o, nil, ""); err != nil || cmp != nil {
		t.Fatalf("cross-repository comparison = %+v, %v", cmp, err)
	}
}

// TestChangesOfAWorktreeArchivedWhileRead: a read that took the session's
// code row before archiving removed the worktree answers with the files
// archiving kept, not a failure of git in a directory that is gone (the
// GUI read a child's changes as it was archived, and got "internal").
func TestChangesOfAWorktreeArchivedWhileRead(t *testing.T) {
	k := newKit(t)
	repo := newRepo(t)
	parent := k.session("p", repo)
	k.svc.SessionStarted(k.ctx, parent)
	t1 := k.endTurn(parent, "turn-1")
	c := k.worktreeChild(parent, "c", t1.CheckpointCommit)
	stale, _ := k.svc.Row(k.ctx, c.ID)
	writeFile(t, filepath.Join(stale.RepositoryRoot, "new.txt"), "new\n")
	k.svc.ArchiveWorktrees(k.ctx, []string{c.ID})
	if _, err := os.Stat(stale.RepositoryRoot); !os.IsNotExist(err) {
		t.Fatalf("the worktree is still there: %v", err)
	}
	for name, read := range map[string]func(context.Context, *ent.SessionCode) (gitrepo.Diff, error){
		"Changes": k.svc.Changes, "ChangedFiles": k.svc.ChangedFiles,
	} {
		d, err := read(k.ctx, stale)
		if err != nil {
			t.Fatalf("%s with the row read before archiving: %v", name, err)
		}
		if got := paths(&d); !slices.Equal(got, []string{"ADDED new.txt"}) {
			t.Errorf("%s = %v, want new.txt added", name, got)
		}
	}
	if b, err := k.svc.Branch(k.ctx, stale); err != nil {
		t.Errorf("Branch with the row read before archiving = %q, %v", b, err)
	}
	other := k.worktreeChild(parent, "o", t1.CheckpointCommit)
	if cmp, err := k.svc.Compare(k.ctx, c, other, parent, "turn-1"); err != nil || cmp == nil {
		t.Errorf("Compare with the archived side = %+v, %v", cmp, err)
	}
}
