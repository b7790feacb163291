package store_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"tuttid/store"
)

// TestOpenReadOnly: beside an open (writing) store, a read-only one reads
// the rows, refuses writes, and never creates a database file.
func TestOpenReadOnly(t *testing.T) {
	ctx := context.Background()
	missing := filepath.Join(t.TempDir(), "none.db")
	if _, err := store.Open(ctx, missing, store.ReadOnly); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("Open(missing, ReadOnly) = %v, want ErrUnavailable", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Open(ReadOnly) created %s: %v", missing, err)
	}

	rw, path := openStore(t)
	if err := rw.Client.Workspace.Create().SetID("w").SetName("w").SetRootPath("/tmp").Exec(ctx); err != nil {
		t.Fatal(err)
	}
	ro, err := store.Open(ctx, path, store.ReadOnly)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if n, err := ro.Client.Workspace.Query().Count(ctx); err != nil || n != 1 {
		t.Fatalf("read-only count = %d, %v; want 1", n, err)
	}
	if err := ro.Client.Workspace.Create().SetID("x").SetName("x").SetRootPath("/tmp").Exec(ctx); err == nil {
		t.Fatal("a write through the read-only store succeeded")
	}
	// The writer goes on while the reader is open.
	if err := rw.Client.Workspace.Create().SetID("w2").SetName("w2").SetRootPath("/tmp").Exec(ctx); err != nil {
		t.Fatalf("write beside the reader: %v", err)
	}
	if n, _ := ro.Client.Workspace.Query().Count(ctx); n != 2 {
		t.Fatalf("reader sees %d workspaces, want 2", n)
	}
}

// TestOpenMustExist: a command beside the server (orphans) opens an
// existing database for writing but never creates one.
func TestOpenMustExist(t *testing.T) {
	ctx := context.Background()
	missing := filepath.Join(t.TempDir(), "none.db")
	if _, err := store.Open(ctx, missing, store.MustExist); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("Open(missing, MustExist) = %v, want ErrUnavailable", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Open(MustExist) created %s: %v", missing, err)
	}
	_, path := openStore(t)
	st, err := store.Open(ctx, path, store.MustExist)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Client.Workspace.Create().SetID("w").SetName("w").SetRootPath("/tmp").Exec(ctx); err != nil {
		t.Fatalf("write through Open(MustExist): %v", err)
	}
}
