package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
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

// TestServeLogFormats: besides its log, tuttid prints one plain line when
// it is ready, with the GUI's address (token included) and the database's
// path; --log-format (here TUTTID_LOG_FORMAT) chooses JSON or slog's text
// for the log, JSON when stderr is not a terminal and nothing is said.
func TestServeLogFormats(t *testing.T) {
	for _, tc := range []struct {
		name   string
		env    []string
		isJSON bool
	}{
		{"json", []string{"TUTTID_LOG_FORMAT=json"}, true},
		{"text", []string{"TUTTID_LOG_FORMAT=text"}, false},
		{"default on a pipe", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "t.db")
			p := startTuttid(t, db, filepath.Join(t.TempDir(), "no-codex"), t.TempDir(), tc.env...)
			p.must(`{ workspaces { id } }`, nil, nil) // the log is written up to here
			ready, listening := 0, 0
			for _, line := range strings.Split(strings.TrimSpace(p.logs()), "\n") {
				if strings.HasPrefix(line, "tuttid is ready") {
					ready++
					if want := "tuttid is ready: open " + p.url + "/app/?token=" + testToken + " (data: " + db + ")"; line != want {
						t.Errorf("ready line %q, want %q", line, want)
					}
					continue
				}
				var rec map[string]any
				if isJSON := json.Unmarshal([]byte(line), &rec) == nil; isJSON != tc.isJSON {
					t.Errorf("log line %q: JSON %v, want %v", line, isJSON, tc.isJSON)
				}
				if !tc.isJSON && !strings.HasPrefix(line, "time=") {
					t.Errorf("log line %q is not slog's text", line)
				}
				if rec["msg"] == "tuttid listening" || strings.Contains(line, `msg="tuttid listening"`) {
					listening++
				}
			}
			if ready != 1 || listening != 1 {
				t.Errorf("%d ready lines and %d listening records, want 1 and 1:\n%s", ready, listening, p.logs())
			}
		})
	}
}
