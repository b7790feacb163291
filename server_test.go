package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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
				if strings.Contains(line, testToken) {
					t.Errorf("a log record carries the token: %q", line)
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

// TestSecondServerRefused: a second tuttid on the same --db, two real
// processes, exits at start with a message naming the first one's pid,
// before it reconciles anything; tuttid tree and tuttid orphans keep
// working beside the first, which goes on serving; once the first is
// killed -9, a new server starts on the database (issue 22, 10).
func TestSecondServerRefused(t *testing.T) {
	db := filepath.Join(t.TempDir(), "t.db")
	home := t.TempDir()
	noCodex := filepath.Join(t.TempDir(), "no-codex")
	first := startTuttid(t, db, noCodex, home)
	var ws struct{ CreateWorkspace struct{ ID string } }
	first.must(`mutation($in: CreateWorkspaceInput!) { createWorkspace(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"name": "one", "rootPath": t.TempDir()}}, &ws)

	second := exec.Command(os.Args[0], "--addr", "127.0.0.1:0", "--db", db, "--codex-bin", noCodex)
	second.Env = tuttidEnv(home)
	var stderr bytes.Buffer
	second.Stderr = &stderr
	done := make(chan error, 1)
	if err := second.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- second.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 {
			t.Errorf("second tuttid: %v, want exit code 1", err)
		}
	case <-time.After(30 * time.Second):
		_ = second.Process.Kill()
		t.Fatalf("a second tuttid on the same database is still running:\n%s", stderr.String())
	}
	want := fmt.Sprintf("in use by another tuttid (pid %d holds %s.lock)", first.cmd.Process.Pid, db)
	if !strings.Contains(stderr.String(), want) || strings.Contains(stderr.String(), "tuttid is ready") {
		t.Errorf("second tuttid said:\n%s\nwant %q", stderr.String(), want)
	}

	// The read-only commands beside the running server.
	if out, err := runCLI(t, home, "tree", "--workspace", ws.CreateWorkspace.ID, "--db", db); err != nil {
		t.Errorf("tree beside the server: %v (%s)", err, out)
	}
	if out, err := runCLI(t, home, "orphans", "--db", db); err != nil {
		t.Errorf("orphans beside the server: %v (%s)", err, out)
	}
	var out struct{ Workspaces []struct{ Name string } }
	first.must(`{ workspaces { name } }`, nil, &out)
	if len(out.Workspaces) != 1 {
		t.Errorf("the first server after the refused start: %+v", out.Workspaces)
	}

	first.kill()
	third := startTuttid(t, db, noCodex, home)
	third.must(`{ workspaces { name } }`, nil, &out)
	if len(out.Workspaces) != 1 {
		t.Errorf("a server after the first was killed: %+v", out.Workspaces)
	}
	if fi, err := os.Stat(db + ".lock"); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the lock file: %v %v, want mode 0600", fi, err)
	}
}
