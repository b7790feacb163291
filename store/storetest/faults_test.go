package storetest_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"tuttid/ent"
	"tuttid/store"
	"tuttid/store/pgtest"
	"tuttid/store/storetest"
)

// bothBackends runs fn on a SQLite file and on PostgreSQL.
func bothBackends(t *testing.T, fn func(t *testing.T, st *store.Store)) {
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			loc := filepath.Join(t.TempDir(), "tuttid.db")
			if name == "postgres" {
				loc = pgtest.URL(t)
			}
			st, err := store.Open(context.Background(), loc)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			fn(t, st)
		})
	}
}

func TestFailWrites(t *testing.T) {
	bothBackends(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		create := func(id string) error {
			return st.Client.Workspace.Create().SetID(id).SetName(id).SetRootPath("/r").Exec(ctx)
		}
		remove, err := storetest.FailWrites(ctx, st, "fail_ws", "INSERT", "workspaces", "NEW.name = 'bad'")
		if err != nil {
			t.Fatal(err)
		}
		if err := create("good"); err != nil {
			t.Errorf("a row the condition does not match failed: %v", err)
		}
		err = st.WithTx(ctx, func(tx *ent.Tx) error {
			return tx.Workspace.Create().SetID("bad").SetName("bad").SetRootPath("/r").Exec(ctx)
		})
		if err == nil || !strings.Contains(err.Error(), "injected") {
			t.Errorf("a matching row: err = %v, want the injected failure", err)
		}
		if err := remove(); err != nil {
			t.Fatal(err)
		}
		if err := create("bad"); err != nil {
			t.Errorf("after remove: %v", err)
		}
	})
}

func TestWriteLockFree(t *testing.T) {
	bothBackends(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		if free, err := storetest.WriteLockFree(ctx, st); err != nil || !free {
			t.Fatalf("no transaction: free = %v, %v", free, err)
		}
		err := st.WithTx(ctx, func(tx *ent.Tx) error {
			if err := tx.Workspace.Create().SetID("w").SetName("w").SetRootPath("/r").Exec(ctx); err != nil {
				return err
			}
			if free, err := storetest.WriteLockFree(ctx, st); err != nil || free {
				t.Errorf("inside a write transaction: free = %v, %v", free, err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if free, err := storetest.WriteLockFree(ctx, st); err != nil || !free {
			t.Errorf("after it: free = %v, %v", free, err)
		}
	})
}
