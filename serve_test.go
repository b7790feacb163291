package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestServeCreatesPrivateDatabase starts tuttid as main does (the test
// binary re-executed as tuttid, through run) under umask 022, with --db in
// a directory other users may read (not the 0700 default data directory),
// and checks that the database, its WAL and its shared-memory files are
// the owner's only: they hold every conversation and command output.
func TestServeCreatesPrivateDatabase(t *testing.T) {
	old := syscall.Umask(0o022) // the child inherits it
	defer syscall.Umask(old)
	shared := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, db := range map[string]string{
		"existing directory": filepath.Join(shared, "t.db"),
		"new directory":      filepath.Join(shared, "new", "t.db"),
	} {
		t.Run(name, func(t *testing.T) {
			// No Codex: the server starts without it and still stores.
			p := startTuttid(t, db, filepath.Join(t.TempDir(), "no-codex"), t.TempDir())
			p.must(`mutation($in: CreateWorkspaceInput!) { createWorkspace(input: $in) { id } }`,
				map[string]any{"in": map[string]any{"name": "perm", "rootPath": t.TempDir()}}, nil)
			for _, f := range []string{db, db + "-wal", db + "-shm"} {
				fi, err := os.Stat(f)
				if err != nil {
					t.Fatal(err)
				}
				if got := fi.Mode().Perm(); got != 0o600 {
					t.Errorf("%s: mode %v, want -rw-------", filepath.Base(f), got)
				}
			}
		})
	}
}
