package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"tuttid/agent"
	"tuttid/store"
)

// seededDB is a database with workspace w and one untitled session s.
func seededDB(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "t.db")
	st, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	st.Client.Workspace.Create().SetID("w").SetName("w").SetRootPath("/tmp").ExecX(ctx)
	st.Client.AgentSession.Create().SetID("s").SetWorkspaceID("w").SetProvider(agent.ProviderCodex).
		SetSettings(agent.ComposerSettings{}).ExecX(ctx)
	return path
}

// TestRun runs the command table in-process: which command an argument
// list reaches, its output and its exit code (0; 2 for a usage error, an
// unknown workspace or session; 1 otherwise).
func TestRun(t *testing.T) {
	db := seededDB(t)
	missing := filepath.Join(t.TempDir(), "none.db")
	for _, tc := range []struct {
		name   string
		args   []string
		env    map[string]string
		code   int
		stdout string // the whole stdout, when not "*"
		stderr string // a part of stderr
	}{
		{"unknown command", []string{"trees"}, nil, 2, "", `tuttid: unknown command "trees"`},
		{"help", []string{"-h"}, nil, 0, "", "tuttid tree --workspace ID"},
		{"serve help", []string{"serve", "-h"}, nil, 0, "", "-log-format"},
		{"serve: unknown flag", []string{"--nope"}, nil, 2, "", "flag provided but not defined: -nope"},
		{"serve: argument", []string{"serve", "extra"}, nil, 2, "", `tuttid: unexpected argument "extra"`},
		{"serve: bad environment", []string{"--db", db}, map[string]string{"TUTTID_MAX_BODY": "big"}, 2, "", `TUTTID_MAX_BODY="big"`},
		{"serve: --agent-nice past 19", []string{"--db", db, "--agent-nice", "20"}, nil, 2, "", "--agent-nice must be from 0 (tuttid's own priority) to 19"},
		{"serve: negative --agent-nice", []string{"--db", db}, map[string]string{"TUTTID_AGENT_NICE": "-1"}, 2, "", "--agent-nice must be from 0"},
		{"serve: bad log format", []string{"--db", db, "--log-format", "xml"}, nil, 2, "", `--log-format "xml" is not text or json`},
		{"tree", []string{"tree", "--workspace", "w", "--db", db}, nil, 0, "Untitled session [READY] s\n", ""},
		{"tree from TUTTID_DB", []string{"tree", "--workspace", "w"}, map[string]string{"TUTTID_DB": db}, 0, "Untitled session [READY] s\n", ""},
		{"tree: --db wins over TUTTID_DB", []string{"tree", "--workspace", "w", "--db", db}, map[string]string{"TUTTID_DB": missing}, 0, "Untitled session [READY] s\n", ""},
		{"tree help", []string{"tree", "-h"}, nil, 0, "", "usage: tuttid tree"},
		{"tree without a workspace", []string{"tree", "--db", db}, nil, 2, "", "tuttid tree: invalid_input: --workspace is required"},
		{"tree: unknown workspace", []string{"tree", "--workspace", "x", "--db", db}, nil, 2, "", "agent.workspace_not_found"},
		{"tree: unknown session", []string{"tree", "--workspace", "w", "--session", "x", "--db", db}, nil, 2, "", "agent.session_not_found"},
		{"tree: bad format", []string{"tree", "--workspace", "w", "--format", "svg", "--db", db}, nil, 2, "", `--format "svg" is not one of text, json, dot`},
		{"tree: no database", []string{"tree", "--workspace", "w", "--db", missing}, nil, 1, "", "tuttid tree: open the database"},
		{"tree: argument", []string{"tree", "--workspace", "w", "--db", db, "more"}, nil, 2, "", `unexpected argument "more"`},
		{"orphans", []string{"orphans", "--db", db}, nil, 0, "", ""},
		{"orphans --json", []string{"orphans", "--json", "--db", db}, nil, 0, "*", ""},
		{"orphans: no database", []string{"orphans", "--db", missing}, nil, 1, "", "tuttid orphans: database " + missing},
		{"orphans: unknown word", []string{"orphans", "--db", db, "purge"}, nil, 2, "", `unknown command "purge"`},
		{"orphans clean: argument", []string{"orphans", "clean", "--db", db, "now"}, nil, 2, "", `clean: unexpected argument "now"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			var stdout, stderr strings.Builder
			code := run(tc.args, &stdout, &stderr)
			if code != tc.code || (tc.stdout != "*" && stdout.String() != tc.stdout) || !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("run(%q) = %d\nstdout %q (want %q)\nstderr %q (want it to hold %q)", tc.args, code, stdout.String(), tc.stdout, stderr.String(), tc.stderr)
			}
		})
	}
	if m, _ := filepath.Glob(missing + "*"); len(m) != 0 {
		t.Errorf("a command created %v", m)
	}
}
