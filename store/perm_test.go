package store_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"tuttid/store"
)

// The database holds every conversation and command output: whatever the
// umask, a new file (and its WAL and shared-memory files) is the owner's
// only, while an existing file keeps the mode its owner gave it.
func TestOpenCreatesPrivateFiles(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	ctx := context.Background()
	dir := t.TempDir() // outside the 0700 default data directory
	cases := []struct {
		name     string
		existing os.FileMode // 0: no file before Open
		want     os.FileMode
	}{
		{"new file", 0, 0o600},
		{"existing file keeps its mode", 0o640, 0o640},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, c.name+".db")
			if c.existing != 0 {
				if err := os.WriteFile(path, nil, c.existing); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(path, c.existing); err != nil {
					t.Fatal(err)
				}
			}
			st, err := store.Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			// A write makes SQLite create the WAL and shared-memory files.
			if _, err := st.Client.Workspace.Create().SetID("w").SetName("w").SetRootPath("/tmp").Save(ctx); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{path, path + "-wal", path + "-shm"} {
				fi, err := os.Stat(f)
				if err != nil {
					t.Fatal(err)
				}
				if got := fi.Mode().Perm(); got != c.want {
					t.Errorf("%s: mode %v, want %v", filepath.Base(f), got, c.want)
				}
			}
		})
	}
}
