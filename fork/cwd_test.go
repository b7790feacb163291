package fork_test

import (
	"os"
	"path/filepath"
	"testing"

	"tuttid/apperr"
	"tuttid/fork"
	"tuttid/store/storetest"
)

// A fork checks the parent's cwd again: a directory inside the root
// swapped for a symlink to outside after the session started is refused
// before Codex hears of it, and a cwd that leads elsewhere inside the root
// is given to Codex as its real path (issue 22, point 15).
func TestForkRechecksParentCwd(t *testing.T) {
	t.Parallel()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(base, "root")
	for _, d := range []string{filepath.Join(root, "app"), filepath.Join(root, "real"), filepath.Join(base, "outside")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	e := newEnv(t)
	e.st.Workspace(storetest.Workspace{ID: "ws-cwd", RootPath: root})
	p := defaultParent()
	p.Workspace, p.Cwd = "ws-cwd", filepath.Join(root, "app")
	e.st.Session(p)
	in := fork.Input{WorkspaceID: "ws-cwd", ParentSessionID: parentID}

	// app is swapped for a symlink to inside the root: allowed, and Codex
	// is given the real path.
	if err := os.Remove(filepath.Join(root, "app")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "real"), filepath.Join(root, "app")); err != nil {
		t.Fatal(err)
	}
	in.RequestID = "req-inside"
	e.mustFork(in)
	if got := e.rt.ForkInputs()[0].Cwd; got != filepath.Join(root, "real") {
		t.Errorf("Codex was given cwd %q, want the real path %q", got, filepath.Join(root, "real"))
	}

	// Now to outside the root: refused, and Codex is not called.
	if err := os.Remove(filepath.Join(root, "app")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base, "outside"), filepath.Join(root, "app")); err != nil {
		t.Fatal(err)
	}
	in.RequestID = "req-outside"
	e.forkErr(in, apperr.InvalidInput)
	if n := e.rt.ForkCalls(); n != 1 {
		t.Errorf("provider fork calls = %d, want 1 (the fork out of the root never reached Codex)", n)
	}
	if rows := e.journal("req-outside"); len(rows) != 0 {
		t.Errorf("journal entries for a refused fork: %v", rows)
	}
}
