package store_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"tuttid/store"
)

// nobody is the uid the tests give a file "of another user" (root only).
const nobody = 65534

// TestOpenRefusesFilesOthersControl: a database file (or its -wal, -shm)
// that another user owns, or that its group or everyone may write, is
// refused with a message that says why, whatever Open is asked to do; a
// private file of the running user opens (issue 22, 17).
func TestOpenRefusesFilesOthersControl(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		file   string // "", "-wal" or "-shm": which file is planted
		mode   os.FileMode
		owner  int // -1: the running user
		opts   []store.Option
		reason string // "" : opens
	}{
		{"private", "", 0o600, -1, nil, ""},
		{"group may read", "", 0o640, -1, nil, ""},
		{"world writable", "", 0o666, -1, nil, "can be written by other users"},
		{"group writable", "", 0o620, -1, nil, "can be written by other users"},
		{"world writable, read only", "", 0o606, -1, []store.Option{store.ReadOnly}, "can be written by other users"},
		{"another user's", "", 0o600, nobody, nil, "belongs to another user"},
		{"another user's, read only", "", 0o600, nobody, []store.Option{store.ReadOnly}, "belongs to another user"},
		{"another user's WAL", "-wal", 0o600, nobody, nil, "belongs to another user"},
		{"a world-writable shared-memory file", "-shm", 0o666, -1, nil, "can be written by other users"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.owner >= 0 && os.Geteuid() != 0 {
				t.Skip("giving a file to another user needs root")
			}
			path := filepath.Join(t.TempDir(), "tuttid.db")
			if tc.file != "" || tc.opts != nil { // a real database to open
				st, err := store.Open(ctx, path)
				if err != nil {
					t.Fatal(err)
				}
				st.Close()
				os.Remove(path + "-wal")
				os.Remove(path + "-shm")
			}
			planted := path + tc.file
			if _, err := os.Stat(planted); err != nil {
				// A new empty file: SQLite would take it as its own.
				if err := os.WriteFile(planted, nil, tc.mode); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Chmod(planted, tc.mode); err != nil {
				t.Fatal(err)
			}
			if tc.owner >= 0 {
				if err := os.Chown(planted, tc.owner, tc.owner); err != nil {
					t.Fatal(err)
				}
			}
			st, err := store.Open(ctx, path, tc.opts...)
			if tc.reason == "" {
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				st.Close()
				return
			}
			if err == nil {
				st.Close()
				t.Fatalf("Open accepted it")
			}
			if !errors.Is(err, store.ErrUnavailable) || !strings.Contains(err.Error(), tc.reason) || !strings.Contains(err.Error(), planted) {
				t.Errorf("Open: %v; want %q naming %s", err, tc.reason, planted)
			}
		})
	}
}
