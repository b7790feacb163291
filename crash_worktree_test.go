package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"tuttid/ent"
	"tuttid/ent/forkjournal"
	"tuttid/fork"
	"tuttid/store"
)

// gitInit makes dir a repository with one commit and an uncommitted change.
func gitInit(t *testing.T, dir string) {
	t.Helper()
	run := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	run("init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run("add", ".")
	run("commit", "-q", "-m", "first")
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func gitWorktrees(t *testing.T, dir string) []string {
	t.Helper()
	cmd := exec.Command("git", "worktree", "list", "--porcelain")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, l := range strings.Split(string(out), "\n") {
		if p, ok := strings.CutPrefix(l, "worktree "); ok {
			paths = append(paths, p)
		}
	}
	return paths
}

func (p *proc) worktreeFork(ws, parent, requestID string) (forkPayload, []gqlErr, error) {
	var out forkPayload
	errs, err := p.gql(`mutation($in: ForkSessionInput!) { forkSession(input: $in) { session { id providerSessionId } } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": parent, "requestId": requestID,
			"code": map[string]any{"mode": "WORKTREE"}}}, &out)
	return out, errs, err
}

// TestCrashDuringWorktreeFork kills tuttid at each point of a worktree
// fork and restarts it: either the child is there with its worktree, or
// nothing is (no worktree directory, no git worktree, no thread), and the
// replay makes exactly one child with one worktree.
func TestCrashDuringWorktreeFork(t *testing.T) {
	points := []struct {
		point     string
		committed bool
	}{
		{fork.CrashBeforeProvider, false},
		{fork.CrashWorktreeMade, false},
		{fork.CrashProviderSent, false},
		{fork.CrashProviderAnswered, false},
		{fork.CrashCommitted, true},
	}
	for _, c := range points {
		t.Run(c.point, func(t *testing.T) {
			r := newCrashRig(t)
			gitInit(t, r.root)
			p := r.tuttid("TUTTID_CRASH_AT=" + c.point)
			ws, parent := r.parent(p)
			if _, errs, err := p.worktreeFork(ws, parent.ID, "req-wt"); err == nil {
				t.Fatalf("the fork answered (%v) although tuttid should have died at %s", errs, c.point)
			}
			p.waitExit(10 * time.Second)
			wtDir := filepath.Join(filepath.Dir(r.db), "worktrees", ws)
			if c.point == fork.CrashWorktreeMade || c.point == fork.CrashProviderAnswered {
				// Before the restart `tuttid orphans` names the worktree.
				found := false
				for _, o := range r.orphans() {
					found = found || (o.RequestID == "req-wt" && strings.HasPrefix(o.Worktree, wtDir))
				}
				if !found {
					t.Errorf("tuttid orphans does not list the crashed fork's worktree under %s", wtDir)
				}
			}

			q := r.tuttid()
			r.journalAndMessages()
			if c.point == fork.CrashProviderAnswered {
				// The thread Codex made in the worktree was archived.
				found := false
				for _, o := range r.orphans() {
					found = found || (o.RequestID == "req-wt" && o.State == "archived" && o.ProviderThreadID != "")
				}
				if !found {
					t.Errorf("the crashed fork's thread is not listed archived: %+v", r.orphans())
				}
			}
			crashedCwd := firstAttemptCwd(t, r.db)
			entries, _ := os.ReadDir(wtDir)
			if c.committed {
				if len(entries) != 1 {
					t.Errorf("committed child: worktrees %v, want its one", entries)
				}
			} else if len(entries) != 0 {
				t.Errorf("after a crash at %s and a restart, worktrees are left: %v", c.point, entries)
			}
			if wts := gitWorktrees(t, r.root); (c.committed && len(wts) != 2) || (!c.committed && len(wts) != 1) {
				t.Errorf("git worktrees after the restart: %v", wts)
			}
			res, errs, err := q.worktreeFork(ws, parent.ID, "req-wt")
			if err != nil || len(errs) > 0 {
				t.Fatalf("replay after the crash: %v %+v", err, errs)
			}
			child := res.ForkSession.Session.ID
			again, errs, err := q.worktreeFork(ws, parent.ID, "req-wt")
			if err != nil || len(errs) > 0 || again.ForkSession.Session.ID != child {
				t.Fatalf("second replay: %+v %v %+v, want %s", again, err, errs, child)
			}
			entries, _ = os.ReadDir(wtDir)
			if len(entries) != 1 || entries[0].Name() != child {
				t.Errorf("worktrees %v, want only the child's %s", entries, child)
			}
			b, err := os.ReadFile(filepath.Join(wtDir, child, "a.txt"))
			if err != nil || string(b) != "one\ntwo\n" {
				t.Errorf("the child's a.txt = %q %v", b, err)
			}
			if wts := gitWorktrees(t, r.root); len(wts) != 2 {
				t.Errorf("git worktrees %v, want the main one and the child's", wts)
			}
			for _, o := range r.orphans() {
				if o.Worktree != "" {
					t.Errorf("orphan worktree listed after the restart: %+v", o)
				}
			}
			orphans := r.orphans()
			q.kill()
			// No thread the crashed attempt made in its worktree is left
			// live at Codex; every one archived is listed.
			live, archived := r.codexForks(parent.ProviderSessionID, crashedCwd)
			if len(live) != 0 && !c.committed {
				t.Errorf("live Codex forks in the crashed attempt's worktree: %v", live)
			}
			var listed []string
			for _, o := range orphans {
				if o.ProviderThreadID != "" {
					listed = append(listed, o.ProviderThreadID)
				}
			}
			slices.Sort(listed)
			slices.Sort(archived)
			if !slices.Equal(listed, archived) {
				t.Errorf("orphans listed %v, archived at Codex %v", listed, archived)
			}
		})
	}
}

// TestOrphansCleanRemovesWorktree: a worktree a crashed fork left (no
// restart yet) is listed by `tuttid orphans` and removed by `tuttid
// orphans clean` once the attempt is stale, with its git worktree entry.
func TestOrphansCleanRemovesWorktree(t *testing.T) {
	r := newCrashRig(t)
	gitInit(t, r.root)
	p := r.tuttid("TUTTID_CRASH_AT=" + fork.CrashWorktreeMade)
	ws, parent := r.parent(p)
	if _, errs, err := p.worktreeFork(ws, parent.ID, "req-clean"); err == nil {
		t.Fatalf("the fork answered (%v)", errs)
	}
	p.waitExit(10 * time.Second)
	wtDir := filepath.Join(filepath.Dir(r.db), "worktrees", ws)
	if entries, _ := os.ReadDir(wtDir); len(entries) != 1 {
		t.Fatalf("worktrees after the crash: %v", entries)
	}
	// Older than clean's bound: no server of this run is in flight.
	ctx := context.Background()
	st, err := store.Open(ctx, r.db)
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	st.Client.ForkJournal.Update().SetUpdatedAt(old).ExecX(ctx)
	st.Close()
	out, err := runCLI(t, r.home, "orphans", "clean", "--db", r.db, "--codex-bin", r.bin)
	if err != nil {
		t.Fatalf("orphans clean: %v\n%s", err, out)
	}
	if entries, _ := os.ReadDir(wtDir); len(entries) != 0 {
		t.Errorf("worktrees after orphans clean: %v", entries)
	}
	if wts := gitWorktrees(t, r.root); len(wts) != 1 {
		t.Errorf("git worktrees after orphans clean: %v", wts)
	}
	for _, o := range r.orphans() {
		if o.Worktree != "" {
			t.Errorf("a worktree is still listed: %+v", o)
		}
	}
}

// firstAttemptCwd is the cwd the first attempt of req-wt recorded: the
// worktree's once it was made.
func firstAttemptCwd(t *testing.T, db string) string {
	t.Helper()
	return firstAttempt(t, db, "req-wt").Cwd
}

// TestCrashDuringSharedForkLeavesNoRefs: a SHARED fork in a repository
// records its child's start under refs/tuttid/sessions/<child>/ before
// Codex is asked; killed after that and before the child is stored, the
// restart drops those refs (the child never existed), and the replay's
// child has its own.
func TestCrashDuringSharedForkLeavesNoRefs(t *testing.T) {
	for _, point := range []string{fork.CrashProviderSent, fork.CrashProviderAnswered} {
		t.Run(point, func(t *testing.T) {
			r := newCrashRig(t)
			gitInit(t, r.root)
			p := r.tuttid("TUTTID_CRASH_AT=" + point)
			ws, parent := r.parent(p)
			if _, errs, err := p.fork(ws, parent.ID, "req-shared"); err == nil {
				t.Fatalf("the fork answered (%v) although tuttid should have died at %s", errs, point)
			}
			p.waitExit(10 * time.Second)
			crashed := firstAttempt(t, r.db, "req-shared").ChildAgentSessionID
			refs := func() string {
				cmd := exec.Command("git", "for-each-ref", "--format=%(refname)", "refs/tuttid/sessions/"+crashed+"/")
				cmd.Dir = r.root
				out, err := cmd.Output()
				if err != nil {
					t.Fatal(err)
				}
				return strings.TrimSpace(string(out))
			}
			if refs() == "" {
				t.Fatalf("no refs recorded for the crashed child %s before the restart: the test exercises nothing", crashed)
			}
			q := r.tuttid()
			if got := refs(); got != "" {
				t.Errorf("refs of the crashed child left after the restart: %s", got)
			}
			res, errs, err := q.fork(ws, parent.ID, "req-shared")
			if err != nil || len(errs) > 0 {
				t.Fatalf("replay after the crash: %v %+v", err, errs)
			}
			if res.ForkSession.Session.ID == crashed && refs() == "" {
				t.Errorf("the replay's child %s has no refs", crashed)
			}
			q.kill()
		})
	}
}

// firstAttempt is the first journal entry of requestID.
func firstAttempt(t *testing.T, db, requestID string) *ent.ForkJournal {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	e, err := st.Client.ForkJournal.Query().Where(forkjournal.RequestID(requestID)).Order(ent.Asc(forkjournal.FieldID)).First(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return e
}
