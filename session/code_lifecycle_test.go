package session

import (
	"context"
	"slices"
	"sync"
	"testing"

	"tuttid/activity/activitytest"
	"tuttid/apperr"
	"tuttid/ent"
)

// fakeWorktrees records what archive and restore ask of the code side; a
// restore that includes fail fails, and onRestore runs inside it.
type fakeWorktrees struct {
	mu        sync.Mutex
	fail      string
	onRestore func()
	restored  [][]string
	undone    [][]string
	archived  [][]string
}

func (f *fakeWorktrees) ArchiveWorktrees(_ context.Context, ids []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.archived = append(f.archived, sorted(ids))
}

func (f *fakeWorktrees) RestoreWorktrees(_ context.Context, ids []string) (func(context.Context), error) {
	f.mu.Lock()
	f.restored = append(f.restored, sorted(ids))
	f.mu.Unlock()
	if f.onRestore != nil {
		f.onRestore()
	}
	if slices.Contains(ids, f.fail) {
		return nil, apperr.New(apperr.ForkCodeFailed, "session %q's worktree could not be made again", f.fail)
	}
	return func(context.Context) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.undone = append(f.undone, sorted(ids))
	}, nil
}

func (f *fakeWorktrees) PrepareDelete(context.Context, []string, bool) (func(context.Context), error) {
	return nil, nil
}

// The rest of session.Code: these tests start no session and end no turn.
func (f *fakeWorktrees) SessionStarted(context.Context, *ent.AgentSession) {}
func (f *fakeWorktrees) TurnEnded(context.Context, *ent.AgentSession, string) func(*ent.TurnUpdateOne) *ent.TurnUpdateOne {
	return nil
}
func (f *fakeWorktrees) Forget(context.Context, string) {}
func (f *fakeWorktrees) WorktreeRoot(context.Context, *ent.AgentSession) (string, error) {
	return "", nil
}

func sorted(ids []string) []string {
	out := slices.Clone(ids)
	slices.Sort(out)
	return out
}

// TestRestoreIsAllOrNothing: a restore makes the worktrees before it
// commits; when one cannot be made, or the commit fails after they were
// made, the update fails and nothing changes: the sessions stay archived,
// no event is published, the title stays, and worktrees made are undone.
func TestRestoreIsAllOrNothing(t *testing.T) {
	t.Parallel()
	all := []string{"a", "a1", "b", "root"}
	for _, tc := range []struct {
		name         string
		fail         string // a session whose worktree cannot be made
		cancel       bool   // the commit fails after the worktrees were made
		code         apperr.Code
		wantArchived []string
		wantUndone   bool
	}{
		{name: "made", wantArchived: []string{"b"}},
		{name: "a worktree cannot be made", fail: "a", code: apperr.ForkCodeFailed, wantArchived: all},
		{name: "the commit fails", cancel: true, code: apperr.StorageUnavailable, wantArchived: all, wantUndone: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, _, _ := branchTree(t)
			rec, code := &activitytest.Recorder{}, &fakeWorktrees{fail: tc.fail}
			e.svc = New(Config{Store: e.st.Store, Publisher: rec, Code: code})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if _, err := e.svc.Update(ctx, UpdateInput{WorkspaceID: "w", AgentSessionID: "root", Archived: boolp(true)}); err != nil {
				t.Fatal(err)
			}
			if want := [][]string{all}; !slices.EqualFunc(code.archived, want, slices.Equal) {
				t.Fatalf("worktrees archived for %v, want %v (after the commit)", code.archived, want)
			}
			rec.Take()
			code.onRestore = func() {
				// The worktrees come first: nothing is committed yet.
				if got := archivedSet(t, e); !slices.Equal(got, all) {
					t.Errorf("archived while the worktrees are made = %v, want %v", got, all)
				}
				if tc.cancel {
					cancel()
				}
			}

			got, err := e.svc.Update(ctx, UpdateInput{WorkspaceID: "w", AgentSessionID: "a1", Title: strp("renamed"), Archived: boolp(false)})
			if apperr.CodeOf(err) != tc.code && !(tc.code == "" && err == nil) {
				t.Fatalf("restore = %v, %v; want code %q", got, err, tc.code)
			}
			if want := [][]string{{"a", "a1", "root"}}; !slices.EqualFunc(code.restored, want, slices.Equal) {
				t.Errorf("worktrees restored for %v, want %v (a1 and its ancestors)", code.restored, want)
			}
			if got := archivedSet(t, e); !slices.Equal(got, tc.wantArchived) {
				t.Errorf("archived after = %v, want %v", got, tc.wantArchived)
			}
			if tc.wantUndone != (len(code.undone) == 1) {
				t.Errorf("undone = %v, want undone %v", code.undone, tc.wantUndone)
			}
			evs := rec.Take()
			a1, _ := e.st.Client.AgentSession.Get(context.Background(), "a1")
			if tc.code != "" {
				if len(evs) != 0 {
					t.Errorf("a failed restore published %v", evs)
				}
				if a1.Title != "t a1" {
					t.Errorf("a failed restore renamed a1 to %q", a1.Title)
				}
				return
			}
			if len(evs) != 3 || a1.Title != "renamed" || got.Archived {
				t.Errorf("restore = %+v with events %v, want a1 renamed and restored, 3 events", got, evs)
			}
		})
	}
}
