package gitrepo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestParseVersion(t *testing.T) {
	for v, want := range map[string][2]int{
		"2.39.5": {2, 39}, "2.45.1.windows.1": {2, 45}, "2.39.5 (Apple Git-154)": {2, 39}, "3.0": {3, 0},
	} {
		major, minor, ok := parseVersion(v)
		if !ok || major != want[0] || minor != want[1] {
			t.Errorf("%q: %d.%d %v", v, major, minor, ok)
		}
	}
	if _, _, ok := parseVersion("garbage"); ok {
		t.Error("garbage parsed")
	}
}

func TestCheckVersion(t *testing.T) {
	ctx := context.Background()
	if v, err := testGit(t).CheckVersion(ctx); err != nil || v == "" {
		t.Errorf("installed git: %q %v", v, err)
	}
	old := filepath.Join(t.TempDir(), "git")
	if err := os.WriteFile(old, []byte("#!/bin/sh\necho 'git version 2.30.2'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{Bin: old}).CheckVersion(ctx); !errors.Is(err, ErrGitTooOld) {
		t.Errorf("git 2.30: %v, want ErrGitTooOld", err)
	}
}
