package store_test

import (
	"context"
	"testing"

	"tuttid/agent"
	"tuttid/ent"
	"tuttid/ent/sessionfork"
	"tuttid/store"
)

// seed creates workspaces and sessions: sessions maps a session id to its
// workspace id.
func seed(t *testing.T, st *store.Store, sessions map[string]string) {
	t.Helper()
	ctx := context.Background()
	seen := map[string]bool{}
	for _, ws := range sessions {
		if seen[ws] {
			continue
		}
		seen[ws] = true
		if err := st.Client.Workspace.Create().SetID(ws).SetName(ws).SetRootPath("/tmp/" + ws).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for id, ws := range sessions {
		if err := st.Client.AgentSession.Create().SetID(id).SetWorkspaceID(ws).
			SetProvider(agent.ProviderCodex).SetSettings(agent.ComposerSettings{}).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

func fork(st *store.Store, ws, parent, child, requestID string) error {
	return st.Client.SessionFork.Create().SetWorkspaceID(ws).
		SetParentAgentSessionID(parent).SetChildAgentSessionID(child).
		SetProvider(agent.ProviderCodex).SetForkRequestID(requestID).
		SetForkedAtUnixMs(1782892800000).Exec(context.Background())
}

func forkRows(t *testing.T, st *store.Store) []*ent.SessionFork {
	t.Helper()
	rows, err := st.Client.SessionFork.Query().Order(ent.Asc(sessionfork.FieldID)).All(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestDeletingChildDeletesLineageRow(t *testing.T) {
	st, _ := openStore(t)
	ctx := context.Background()
	seed(t, st, map[string]string{"root": "w", "a": "w", "b": "w"})
	for _, f := range [][2]string{{"root", "a"}, {"root", "b"}} {
		if err := fork(st, "w", f[0], f[1], "req-"+f[1]); err != nil {
			t.Fatal(err)
		}
	}

	if err := st.Client.AgentSession.DeleteOneID("a").Exec(ctx); err != nil {
		t.Fatalf("delete child: %v", err)
	}
	rows := forkRows(t, st)
	if len(rows) != 1 || rows[0].ChildAgentSessionID != "b" {
		t.Fatalf("lineage rows after deleting child a = %v, want only root->b", rows)
	}
	if _, err := st.Client.AgentSession.Get(ctx, "root"); err != nil {
		t.Fatalf("parent must survive its child's deletion: %v", err)
	}
}

func TestDeletingParentDeletesLineageRow(t *testing.T) {
	st, _ := openStore(t)
	ctx := context.Background()
	seed(t, st, map[string]string{"root": "w", "mid": "w", "leaf": "w"})
	if err := fork(st, "w", "root", "mid", "r1"); err != nil {
		t.Fatal(err)
	}
	if err := fork(st, "w", "mid", "leaf", "r2"); err != nil {
		t.Fatal(err)
	}

	// mid is the child of one row and the parent of another: both go.
	if err := st.Client.AgentSession.DeleteOneID("mid").Exec(ctx); err != nil {
		t.Fatalf("delete parent: %v", err)
	}
	if rows := forkRows(t, st); len(rows) != 0 {
		t.Fatalf("lineage rows after deleting mid = %v, want none", rows)
	}
	// The sessions themselves are not cascaded: only the lineage rows.
	if n := st.Client.AgentSession.Query().CountX(ctx); n != 2 {
		t.Fatalf("%d sessions left, want 2 (root and leaf)", n)
	}

	// Deleting a workspace removes its sessions and so their lineage.
	seed(t, st, map[string]string{"p": "w2", "c": "w2"})
	if err := fork(st, "w2", "p", "c", "r3"); err != nil {
		t.Fatal(err)
	}
	if err := st.Client.Workspace.DeleteOneID("w2").Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if rows := forkRows(t, st); len(rows) != 0 {
		t.Fatalf("lineage rows after deleting the workspace = %v, want none", rows)
	}
}

func TestOneParentPerChild(t *testing.T) {
	st, _ := openStore(t)
	seed(t, st, map[string]string{"p1": "w", "p2": "w", "child": "w"})
	if err := fork(st, "w", "p1", "child", "r1"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, parent string }{
		{"other parent", "p2"},
		{"same parent again", "p1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := fork(st, "w", tc.parent, "child", "r-"+tc.name)
			if !ent.IsConstraintError(err) {
				t.Fatalf("second lineage row for the same child: err = %v, want a constraint error", err)
			}
		})
	}
	if rows := forkRows(t, st); len(rows) != 1 || rows[0].ParentAgentSessionID != "p1" {
		t.Fatalf("lineage rows = %v, want only p1->child", rows)
	}
}

func TestRequestIDUniquePerWorkspace(t *testing.T) {
	st, _ := openStore(t)
	seed(t, st, map[string]string{
		"p": "w1", "c1": "w1", "c2": "w1",
		"q": "w2", "d1": "w2",
	})
	if err := fork(st, "w1", "p", "c1", "same-request"); err != nil {
		t.Fatal(err)
	}
	if err := fork(st, "w1", "p", "c2", "same-request"); !ent.IsConstraintError(err) {
		t.Fatalf("same request id in the same workspace: err = %v, want a constraint error", err)
	}
	if err := fork(st, "w2", "q", "d1", "same-request"); err != nil {
		t.Fatalf("same request id in another workspace: %v", err)
	}
	if n := len(forkRows(t, st)); n != 2 {
		t.Fatalf("%d lineage rows, want 2", n)
	}
}

// TestLineageRowNeedsExistingSessions: the foreign keys are enforced, so a
// lineage row cannot point at a session that does not exist.
func TestLineageRowNeedsExistingSessions(t *testing.T) {
	st, _ := openStore(t)
	seed(t, st, map[string]string{"p": "w", "c": "w"})
	for _, tc := range []struct{ name, parent, child string }{
		{"missing parent", "nope", "c"},
		{"missing child", "p", "nope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := fork(st, "w", tc.parent, tc.child, "r-"+tc.name); err == nil {
				t.Fatal("lineage row with a missing session was stored")
			}
		})
	}
}
