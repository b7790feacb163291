package main

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"tuttid/agent"
	"tuttid/ent/forkjournal"
	"tuttid/store"
)

// TestOrphansNeverTouchALiveChild: a journal entry that names a live
// child's thread (what a clean beside a running server recorded when it
// took an in-flight fork's thread for a stale attempt's) is not listed by
// `tuttid orphans`, and `tuttid orphans clean` does not archive the
// thread: the child still runs turns on the real Codex (issue 22, point 2;
// before, the thread was listed and archived, and the child's next turn
// failed).
func TestOrphansNeverTouchALiveChild(t *testing.T) {
	r := newCrashRig(t)
	p := r.tuttid()
	ws, parent := r.parent(p)
	fk, errs, err := p.fork(ws, parent.ID, "req-live")
	if err != nil || len(errs) > 0 {
		t.Fatalf("fork: %v %+v", err, errs)
	}
	child := fk.ForkSession.Session
	st, err := store.Open(context.Background(), r.db)
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-10 * time.Minute)
	st.Client.ForkJournal.Create().SetWorkspaceID(ws).SetRequestID("req-stale").SetFingerprint("f").
		SetParentAgentSessionID(parent.ID).SetParentProviderSessionID(parent.ProviderSessionID).
		SetProvider(agent.ProviderCodex).SetCwd(r.root).SetState(forkjournal.StateOrphaned).
		SetChildProviderSessionID(child.ProviderSessionID).SetCreatedAt(old).SetUpdatedAt(old).
		SaveX(context.Background())
	st.Close()

	for _, o := range r.orphans() {
		if o.ProviderThreadID == child.ProviderSessionID {
			t.Errorf("tuttid orphans lists the live child's thread: %+v", o)
		}
	}
	// The server's Codex holds the child's thread open (no other Codex can
	// archive it then): the clean runs once it is gone.
	p.kill()
	out, err := runCLI(t, r.home, "orphans", "clean", "--db", r.db, "--codex-bin", r.bin)
	if err != nil {
		t.Fatalf("orphans clean: %v (%s)", err, out)
	}
	if strings.Contains(out, child.ProviderSessionID) {
		t.Errorf("orphans clean printed the live child's thread: %q", out)
	}
	live, archived := r.codexForks(parent.ProviderSessionID, r.root)
	if slices.Contains(archived, child.ProviderSessionID) || !slices.Contains(live, child.ProviderSessionID) {
		t.Fatalf("Codex: live %v archived %v; the child's thread %s must stay live", live, archived, child.ProviderSessionID)
	}
	q := r.tuttid()
	defer q.kill()
	q.send(ws, child.ID, "still there?")
	q.waitSession(ws, child.ID, "the child's turn done", func(s sessionView) bool {
		return idle(s) && s.Turns[len(s.Turns)-1].Status == "COMPLETED" && len(s.Turns) == len(parent.Turns)+1
	})
}
