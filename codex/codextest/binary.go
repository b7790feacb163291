package codextest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BinaryEnv names the environment variable that overrides the codex binary.
const BinaryEnv = "CODEX_BIN"

// binaryRel is where `make tools` installs codex, relative to the module root.
var binaryRel = filepath.Join(".tools", "codex", "node_modules", ".bin", "codex")

// installHint says how to get the binary.
const installHint = "install it with `make tools` or `npm install --prefix .tools/codex @openai/codex@0.169.0` at the module root, or set " + BinaryEnv

// FindBinary locates the codex binary for tests: $CODEX_BIN if set, else
// <module root>/.tools/codex/node_modules/.bin/codex, the module root being
// the nearest directory above the working directory holding go.mod. For
// TestMain; tests use Binary.
func FindBinary() (string, error) {
	if p := os.Getenv(BinaryEnv); p != "" {
		if err := checkExecutable(p); err != nil {
			return "", fmt.Errorf("codextest: $%s: %w", BinaryEnv, err)
		}
		return p, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("codextest: %w", err)
	}
	root, err := moduleRoot(wd)
	if err != nil {
		return "", err
	}
	p := filepath.Join(root, binaryRel)
	if err := checkExecutable(p); err != nil {
		return "", fmt.Errorf("codextest: codex not found: %w; %s", err, installHint)
	}
	return p, nil
}

// Binary returns FindBinary's path. Without a binary the test fails when $CI
// is set (tests that need Codex must not pass silently in CI) and is skipped
// otherwise, with a hint how to install it.
func Binary(t testing.TB) string {
	t.Helper()
	p, err := FindBinary()
	if err == nil {
		return p
	}
	if os.Getenv(BinaryEnv) != "" || os.Getenv("CI") != "" {
		// A wrong explicit $CODEX_BIN is a setup error, never a skip.
		t.Fatalf("%v", err)
		return ""
	}
	t.Skipf("skipping: %v", err)
	return ""
}

// moduleRoot walks up from dir to the first directory with a go.mod.
func moduleRoot(dir string) (string, error) {
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("codextest: no go.mod above %s; %s", dir, installHint)
		}
		d = parent
	}
}

func checkExecutable(p string) error {
	fi, err := os.Stat(p) // follows the .bin symlink
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return errors.New(p + " is a directory")
	}
	if fi.Mode().Perm()&0o111 == 0 {
		return errors.New(p + " is not executable")
	}
	return nil
}

// RecordingBinary returns an executable that runs Binary(t) with the same
// arguments and appends everything written to its stdin (the client's
// JSON-RPC messages, one a line) to record.
func RecordingBinary(t testing.TB) (bin, record string) {
	t.Helper()
	real := Binary(t)
	dir := t.TempDir()
	record = filepath.Join(dir, "client.jsonl")
	bin = filepath.Join(dir, "codex")
	script := "#!/bin/sh\ntee -a " + shellQuote(record) + " | " + shellQuote(real) + " \"$@\"\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, record
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
