package codebranch_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"tuttid/ent/sessioncode"
	"tuttid/gitrepo"
)

// A session in a repository: its start is recorded, each turn's end is a
// checkpoint under refs/tuttid/ only, a turn's diff is its own changes
// (shell edits and untracked files included, what was uncommitted before
// the session left out), a turn that changed nothing points at the
// previous checkpoint, and the person's index, HEAD, branches and stash
// never move.
func TestTurnCheckpoints(t *testing.T) {
	k := newKit(t)
	repo := newRepo(t)
	// Uncommitted before the session: never part of a turn's diff.
	writeFile(t, filepath.Join(repo, "a.txt"), "a1\nbefore\na3\n")
	before := personState(t, repo)
	a := k.session("s1", filepath.Join(repo))
	k.svc.SessionStarted(k.ctx, a)

	row, err := k.svc.Row(k.ctx, a.ID)
	if err != nil || row == nil {
		t.Fatalf("code row: %v %v", row, err)
	}
	if row.Mode != sessioncode.ModeSHARED || row.RepositoryRoot != repo || row.StartCommit == "" {
		t.Fatalf("row = mode %s root %s start %q", row.Mode, row.RepositoryRoot, row.StartCommit)
	}

	// Turn 1: edits a tracked file and adds an untracked one.
	writeFile(t, filepath.Join(repo, "b.txt"), "b1\nb2 turn1\nb3\n")
	writeFile(t, filepath.Join(repo, "new.go"), "package x\n")
	t1 := k.endTurn(a, "turn-1")
	if t1.CheckpointCommit == "" || t1.CheckpointHead != gitT(t, repo, "rev-parse", "HEAD") {
		t.Fatalf("turn 1 checkpoint = %q head %q", t1.CheckpointCommit, t1.CheckpointHead)
	}
	d, err := k.svc.TurnDiff(k.ctx, t1, true)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := paths(d), []string{"MODIFIED b.txt", "ADDED new.go"}; !slices.Equal(got, want) {
		t.Fatalf("turn 1 diff = %v, want %v", got, want)
	}
	if !strings.Contains(d.Patch, "+b2 turn1") {
		t.Fatalf("turn 1 patch = %q", d.Patch)
	}
	// Without the patch: the same files, no patch.
	files, err := k.svc.TurnDiff(k.ctx, t1, false)
	if err != nil || !slices.Equal(paths(files), paths(d)) || files.Patch != "" || files.Files[0].Additions != d.Files[0].Additions {
		t.Fatalf("files only = %+v, %v", files, err)
	}

	// Turn 2: nothing changed: the same commit, no new object.
	t2 := k.endTurn(a, "turn-2")
	if t2.CheckpointCommit != t1.CheckpointCommit {
		t.Fatalf("idle turn checkpoint %q, want the previous %q", t2.CheckpointCommit, t1.CheckpointCommit)
	}
	if d, err = k.svc.TurnDiff(k.ctx, t2, true); err != nil || len(d.Files) != 0 {
		t.Fatalf("idle turn diff = %v, %v", d, err)
	}

	// Turn 3: deletes a file.
	if err := os.Remove(filepath.Join(repo, "new.go")); err != nil {
		t.Fatal(err)
	}
	t3 := k.endTurn(a, "turn-3")
	if d, err = k.svc.TurnDiff(k.ctx, t3, true); err != nil {
		t.Fatal(err)
	}
	if got, want := paths(d), []string{"DELETED new.go"}; !slices.Equal(got, want) {
		t.Fatalf("turn 3 diff = %v, want %v", got, want)
	}

	// Only refs/tuttid/ refs were added, one per turn and the start.
	refs := gitT(t, repo, "for-each-ref", "--format=%(refname)", "refs/tuttid/")
	want := "refs/tuttid/sessions/s1/start\nrefs/tuttid/sessions/s1/turns/turn-1\nrefs/tuttid/sessions/s1/turns/turn-2\nrefs/tuttid/sessions/s1/turns/turn-3"
	if refs != want {
		t.Fatalf("refs:\n%s\nwant:\n%s", refs, want)
	}
	// The person's files were changed by the "turns" only; the rest of
	// their repository is as it was.
	writeFile(t, filepath.Join(repo, "b.txt"), "b1\nb2\nb3\n")
	if after := personState(t, repo); after != before {
		t.Fatalf("the person's repository changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}

	// Delete: the refs and the kept index go; nothing else.
	k.svc.Forget(k.ctx, a.ID)
	if refs := gitT(t, repo, "for-each-ref", "refs/tuttid/"); refs != "" {
		t.Fatalf("refs left after Forget: %s", refs)
	}
	if _, err := os.Stat(filepath.Join(k.data, "code", "index", a.ID)); !os.IsNotExist(err) {
		t.Fatalf("kept index left after Forget: %v", err)
	}
	if after := personState(t, repo); after != before {
		t.Fatalf("Forget changed the person's repository")
	}
}

// A session outside any repository has no code row and no checkpoints.
func TestNoRepositoryNoCheckpoint(t *testing.T) {
	k := newKit(t)
	a := k.session("s1", t.TempDir())
	k.svc.SessionStarted(k.ctx, a)
	if row, err := k.svc.Row(k.ctx, a.ID); err != nil || row != nil {
		t.Fatalf("row = %v, %v; want none", row, err)
	}
	if tt := k.endTurn(a, "turn-1"); tt.CheckpointCommit != "" {
		t.Fatalf("checkpoint %q outside a repository", tt.CheckpointCommit)
	}
}

// A checkpoint that fails leaves the turn without one (the turn itself is
// stored by the caller as always); a session started before code rows
// existed gets its row at its next turn.
func TestCheckpointFailureAndLateRow(t *testing.T) {
	k := newKit(t)
	repo := newRepo(t)
	a := k.session("s1", repo)
	// No SessionStarted: a session from before.
	writeFile(t, filepath.Join(repo, "a.txt"), "changed\n")
	t1 := k.endTurn(a, "turn-1")
	if t1.CheckpointCommit == "" {
		t.Fatal("no checkpoint for a session without a row")
	}
	if row, _ := k.svc.Row(k.ctx, a.ID); row == nil {
		t.Fatal("no row made at the turn's end")
	}
	// Its first diff is against the HEAD of its checkpoint.
	d, err := k.svc.TurnDiff(k.ctx, t1, true)
	if err != nil || !slices.Contains(paths(d), "MODIFIED a.txt") {
		t.Fatalf("diff = %v, %v", d, err)
	}
	// A broken repository: the checkpoint fails, the turn has none.
	if err := os.Rename(filepath.Join(repo, ".git"), filepath.Join(repo, "git.moved")); err != nil {
		t.Fatal(err)
	}
	if t2 := k.endTurn(a, "turn-2"); t2.CheckpointCommit != "" {
		t.Fatalf("checkpoint %q from a broken repository", t2.CheckpointCommit)
	}
}

var _ = gitrepo.RefPrefix

// A SHARED fork child (its copied turns carry no checkpoint, and no one
// recorded its start): its first turn's diff starts from the parent's
// checkpoint of the fork turn, so it shows the child's own changes only.
func TestForkChildDiffStartsAtForkPoint(t *testing.T) {
	k := newKit(t)
	repo := newRepo(t)
	parent := k.session("p", repo)
	k.svc.SessionStarted(k.ctx, parent)
	writeFile(t, filepath.Join(repo, "parent.txt"), "parent\n")
	k.endTurn(parent, "turn-1")

	child := k.session("c", repo)
	// The fork copied turn-1 without its checkpoint.
	if err := k.st.Client.Turn.Create().SetAgentSessionID("c").SetTurnID("turn-1").
		SetStartedAt(k.st.Client.Turn.Query().FirstX(k.ctx).StartedAt).Exec(k.ctx); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(repo, "child.txt"), "child\n")
	t2 := k.endTurn(child, "turn-2")
	d, err := k.svc.TurnDiff(k.ctx, t2, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(d); !slices.Equal(got, []string{"ADDED child.txt"}) {
		t.Fatalf("child's first diff = %v, want only its own file", got)
	}
}
