package session

import (
	"context"
	"slices"
	"strings"
	"testing"

	"tuttid/activity"
	"tuttid/activity/activitytest"
	"tuttid/agent/agenttest"
	"tuttid/apperr"
	"tuttid/paging"
	"tuttid/store/storetest"
	"tuttid/validate"
)

// branchTree is, in workspace w: root <- a <- a1, root <- b, and an
// unrelated session other; tree sessions have provider threads "th-<id>".
func branchTree(t *testing.T) (*testEnv, *activitytest.Recorder, *agenttest.Runtime) {
	t.Helper()
	e := newTestEnv(t)
	rec, rt := &activitytest.Recorder{}, agenttest.New()
	e.svc = New(Config{Store: e.st.Store, Publisher: rec, Runtime: rt})
	e.st.Workspace(storetest.Workspace{ID: "w"})
	for _, id := range []string{"root", "a", "a1", "b", "other"} {
		e.st.Session(storetest.Session{ID: id, Workspace: "w", Thread: "th-" + id, Title: "t " + id})
	}
	for i, f := range [][2]string{{"root", "a"}, {"a", "a1"}, {"root", "b"}} {
		e.st.Forks(storetest.Fork{Workspace: "w", Parent: f[0], Child: f[1], RequestID: f[1],
			ParentThread: "th-" + f[0], ChildThread: "th-" + f[1], At: int64(i)})
	}
	return e, rec, rt
}

func updatedIDs(evs []activity.Event, kind activity.Kind) []string {
	var out []string
	for _, ev := range evs {
		if ev.Kind != kind {
			continue
		}
		out = append(out, ev.AgentSessionID)
	}
	return out
}

func archivedSet(t *testing.T, e *testEnv) []string {
	t.Helper()
	var out []string
	for _, a := range e.st.Client.AgentSession.Query().AllX(context.Background()) {
		if a.Archived {
			out = append(out, a.ID)
		}
	}
	slices.Sort(out)
	return out
}

func boolp(v bool) *bool { return &v }

func TestUpdateArchivesBranchAndRestoresWithAncestors(t *testing.T) {
	t.Parallel()
	e, rec, _ := branchTree(t)
	ctx := context.Background()

	got, err := e.svc.Update(ctx, UpdateInput{WorkspaceID: "w", AgentSessionID: "a", Archived: boolp(true)})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Archived {
		t.Fatalf("returned session not archived: %+v", got)
	}
	if want := []string{"a", "a1"}; !slices.Equal(archivedSet(t, e), want) {
		t.Fatalf("archived = %v, want %v (a's branch)", archivedSet(t, e), want)
	}
	evs := rec.Take()
	ids := updatedIDs(evs, activity.SessionUpdated)
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"a", "a1"}) || len(evs) != 2 {
		t.Fatalf("events = %v, want SESSION_UPDATED for a and a1", evs)
	}
	for _, ev := range evs {
		if !ev.Session.Archived {
			t.Fatalf("event for %s carries archived=false", ev.AgentSessionID)
		}
	}

	// Archiving again changes nothing and says nothing.
	if _, err := e.svc.Update(ctx, UpdateInput{WorkspaceID: "w", AgentSessionID: "a", Archived: boolp(true)}); err != nil {
		t.Fatal(err)
	}
	if evs := rec.Take(); len(evs) != 0 {
		t.Fatalf("a no-op archive published %v", evs)
	}

	// The default listing leaves the branch out; archived=true lists it.
	list := func(archived *bool) []string {
		p, err := e.reads().Sessions(ctx, "w", false, archived, paging.Args{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, a := range p.Nodes {
			out = append(out, a.ID)
		}
		slices.Sort(out)
		return out
	}
	if got, want := list(boolp(false)), []string{"b", "other", "root"}; !slices.Equal(got, want) {
		t.Fatalf("unarchived sessions = %v, want %v", got, want)
	}
	if got, want := list(boolp(true)), []string{"a", "a1"}; !slices.Equal(got, want) {
		t.Fatalf("archived sessions = %v, want %v", got, want)
	}
	if got := list(nil); len(got) != 5 {
		t.Fatalf("all sessions = %v, want 5", got)
	}

	// Archive the whole tree, then restore the grandchild: it comes back
	// with its ancestors, and b (not on its path) stays archived.
	if _, err := e.svc.Update(ctx, UpdateInput{WorkspaceID: "w", AgentSessionID: "root", Archived: boolp(true)}); err != nil {
		t.Fatal(err)
	}
	if ids := updatedIDs(rec.Take(), activity.SessionUpdated); len(ids) != 2 {
		t.Fatalf("archiving root updated %v, want root and b (a, a1 were archived)", ids)
	}
	if _, err := e.svc.Update(ctx, UpdateInput{WorkspaceID: "w", AgentSessionID: "a1", Archived: boolp(false)}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"b"}; !slices.Equal(archivedSet(t, e), want) {
		t.Fatalf("archived after restoring a1 = %v, want %v", archivedSet(t, e), want)
	}
	ids = updatedIDs(rec.Take(), activity.SessionUpdated)
	slices.Sort(ids)
	if want := []string{"a", "a1", "root"}; !slices.Equal(ids, want) {
		t.Fatalf("restore published %v, want %v", ids, want)
	}
}

func TestUpdateTitle(t *testing.T) {
	t.Parallel()
	e, rec, _ := branchTree(t)
	ctx := context.Background()
	got, err := e.svc.Update(ctx, UpdateInput{WorkspaceID: "w", AgentSessionID: "b", Title: strp("  Second try \n")})
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != "Second try" {
		t.Fatalf("title = %q, want it trimmed", got.Title)
	}
	evs := rec.Take()
	if len(evs) != 1 || evs[0].Kind != activity.SessionUpdated || evs[0].Session.Title != "Second try" {
		t.Fatalf("events = %+v, want one SESSION_UPDATED with the new title", evs)
	}
	// Title and archive at once: one event for the session itself.
	if _, err := e.svc.Update(ctx, UpdateInput{WorkspaceID: "w", AgentSessionID: "a1", Title: strp("leaf"), Archived: boolp(true)}); err != nil {
		t.Fatal(err)
	}
	evs = rec.Take()
	if len(evs) != 1 || evs[0].Session.Title != "leaf" || !evs[0].Session.Archived {
		t.Fatalf("events = %+v, want one SESSION_UPDATED, renamed and archived", evs)
	}
	// "" clears the title.
	if got, err := e.svc.Update(ctx, UpdateInput{WorkspaceID: "w", AgentSessionID: "b", Title: strp("")}); err != nil || got.Title != "" {
		t.Fatalf("clearing the title: %+v, %v", got, err)
	}

	for _, tc := range []struct {
		name string
		in   UpdateInput
		code apperr.Code
	}{
		{"too long", UpdateInput{WorkspaceID: "w", AgentSessionID: "b", Title: strp(strings.Repeat("x", validate.MaxTitleLen+1))}, apperr.InvalidInput},
		{"not UTF-8", UpdateInput{WorkspaceID: "w", AgentSessionID: "b", Title: strp("\xff")}, apperr.InvalidInput},
		{"nothing", UpdateInput{WorkspaceID: "w", AgentSessionID: "b"}, apperr.InvalidInput},
		{"unknown session", UpdateInput{WorkspaceID: "w", AgentSessionID: "nope", Title: strp("x")}, apperr.SessionNotFound},
		{"other workspace", UpdateInput{WorkspaceID: "w2", AgentSessionID: "b", Title: strp("x")}, apperr.SessionNotFound},
		{"bad id", UpdateInput{WorkspaceID: "w", AgentSessionID: "a b", Title: strp("x")}, apperr.InvalidInput},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := e.svc.Update(ctx, tc.in); apperr.CodeOf(err) != tc.code {
				t.Fatalf("err = %v, want %s", err, tc.code)
			}
		})
	}
	if b, _ := e.svc.Session(ctx, "w", "b"); b.Title != "" {
		t.Fatalf("a rejected update changed the title to %q", b.Title)
	}
}

func TestDeleteSubtree(t *testing.T) {
	t.Parallel()
	e, rec, rt := branchTree(t)
	ctx := context.Background()
	e.st.Client.Turn.Create().SetAgentSessionID("a1").SetTurnID("running").ExecX(ctx) // IN_PROGRESS
	id, err := e.svc.Delete(ctx, DeleteInput{WorkspaceID: "w", SessionID: "a", Subtree: true})
	if err != nil || id != "a" {
		t.Fatalf("DeleteSubtree = %q, %v", id, err)
	}
	var left []string
	for _, a := range e.st.Client.AgentSession.Query().AllX(ctx) {
		left = append(left, a.ID)
	}
	slices.Sort(left)
	if want := []string{"b", "other", "root"}; !slices.Equal(left, want) {
		t.Fatalf("sessions left = %v, want %v", left, want)
	}
	if n := e.st.Client.SessionFork.Query().CountX(ctx); n != 1 {
		t.Fatalf("%d lineage rows left, want 1 (root -> b)", n)
	}
	if n := e.st.Client.Turn.Query().CountX(ctx); n != 0 {
		t.Fatalf("%d turns left, want none", n)
	}
	// Descendants first, each once.
	if got, want := updatedIDs(rec.Take(), activity.SessionDeleted), []string{"a1", "a"}; !slices.Equal(got, want) {
		t.Fatalf("SESSION_DELETED for %v, want %v", got, want)
	}
	archived := rt.Archived()
	slices.Sort(archived)
	if want := []string{"th-a", "th-a1"}; !slices.Equal(archived, want) {
		t.Fatalf("archived threads %v, want %v", archived, want)
	}
	var interrupted []string
	for _, in := range rt.Interrupted() {
		interrupted = append(interrupted, in.TurnID)
	}
	if want := []string{"running"}; !slices.Equal(interrupted, want) {
		t.Fatalf("interrupted %v, want %v", interrupted, want)
	}
	if _, err := e.svc.Delete(ctx, DeleteInput{WorkspaceID: "w", SessionID: "a", Subtree: true}); apperr.CodeOf(err) != apperr.SessionNotFound {
		t.Fatalf("deleting again: %v, want session_not_found", err)
	}
}
