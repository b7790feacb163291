package session

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tuttid/agent/agenttest"
	"tuttid/apperr"
	"tuttid/ent/agentsession"
	"tuttid/store/storetest"
)

func TestResolveRootAndCwd(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	root := filepath.Join(base, "root")
	mustMkdir(t, filepath.Join(root, "sub", "deep"))
	mustMkdir(t, filepath.Join(base, "outside"))
	if err := os.WriteFile(filepath.Join(root, "file"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, filepath.Join(base, "outside"), filepath.Join(root, "escape"))
	mustSymlink(t, filepath.Join(root, "sub"), filepath.Join(root, "inner"))
	mustSymlink(t, root, filepath.Join(base, "rootlink"))

	t.Run("root", func(t *testing.T) {
		for _, tc := range []struct {
			in, want, errPart string
		}{
			{in: root, want: root},
			{in: filepath.Join(base, "rootlink"), want: root}, // stored resolved
			{in: root + "/sub/..", want: root},
			{in: "/", errPart: `rootPath "/" is the file system's root`},
			{in: "/tmp/..", errPart: "is the file system's root"},
			{in: "relative", errPart: `must be an absolute path, got "relative"`},
			{in: "", errPart: "must be an absolute path"},
			{in: filepath.Join(base, "nope"), errPart: `"` + filepath.Join(base, "nope") + `" does not exist`},
			{in: filepath.Join(root, "file"), errPart: "is not a directory"},
			{in: filepath.Join(root, "file", "x"), errPart: "is not a usable directory"},
		} {
			got, err := ResolveRoot(tc.in)
			check(t, "rootPath "+tc.in, got, err, tc.want, tc.errPart)
		}
	})
	t.Run("cwd", func(t *testing.T) {
		for _, tc := range []struct {
			cwd, want, errPart string
		}{
			{cwd: "", want: root},
			{cwd: "sub", want: filepath.Join(root, "sub")},
			{cwd: "sub/deep", want: filepath.Join(root, "sub", "deep")},
			{cwd: filepath.Join(root, "sub"), want: filepath.Join(root, "sub")},
			{cwd: "inner/deep", want: filepath.Join(root, "sub", "deep")}, // a symlink inside the root
			{cwd: ".", want: root},
			{cwd: "..", errPart: `cwd ".." is outside the workspace root`},
			{cwd: "/etc", errPart: `cwd "/etc" is outside the workspace root`},
			{cwd: filepath.Join(base, "outside"), errPart: "is outside the workspace root"},
			{cwd: "escape", errPart: `cwd "escape" is outside the workspace root`}, // a symlink out of the root
			{cwd: "missing", errPart: `cwd "missing" does not exist`},
			{cwd: "file", errPart: `cwd "file" is not a directory`},
		} {
			got, err := ResolveCwd(root, tc.cwd)
			check(t, "cwd "+tc.cwd, got, err, tc.want, tc.errPart)
		}
		if _, err := ResolveCwd(filepath.Join(base, "gone"), ""); err == nil || !strings.Contains(err.Error(), "rootPath") {
			t.Errorf("a workspace whose root is gone: %v", err)
		}
	})
}

func check(t *testing.T, what, got string, err error, want, errPart string) {
	t.Helper()
	if errPart == "" {
		if err != nil || got != want {
			t.Errorf("%s: got %q, %v; want %q", what, got, err, want)
		}
		return
	}
	if apperr.CodeOf(err) != apperr.InvalidInput || !strings.Contains(apperr.From(err).Message, errPart) {
		t.Errorf("%s: got %q, %v; want invalid_input with %q", what, got, err, errPart)
	}
}

func mustMkdir(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o700); err != nil {
		t.Fatal(err)
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// A cwd checked when the session was made is checked again where it is
// used: a directory inside the root replaced by a symlink to outside, or a
// root whose path now leads elsewhere, is refused; the real path is
// returned (issue 22, point 15).
func TestCheckCwdAtUse(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	root := filepath.Join(base, "root")
	mustMkdir(t, filepath.Join(root, "sub", "deep"))
	mustMkdir(t, filepath.Join(base, "outside"))
	mustMkdir(t, filepath.Join(base, "elsewhere", "sub"))
	// Stored when the session was made, both checked then.
	cwd, err := ResolveCwd(root, "sub")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := CheckCwd(root, cwd); err != nil || got != cwd {
		t.Fatalf("CheckCwd before the swap: %q, %v; want %q", got, err, cwd)
	}
	mustSymlink(t, filepath.Join(root, "sub"), filepath.Join(root, "inner"))
	if got, err := CheckCwd(root, filepath.Join(root, "inner", "deep")); err != nil || got != filepath.Join(root, "sub", "deep") {
		t.Errorf("a symlink inside the root: %q, %v; want the real path", got, err)
	}

	// The directory is replaced by a symlink to outside the root.
	if err := os.RemoveAll(filepath.Join(root, "sub")); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, filepath.Join(base, "outside"), filepath.Join(root, "sub"))
	got, err := CheckCwd(root, cwd)
	check(t, "cwd swapped for a symlink out of the root", got, err, "", "now leads outside the workspace root")

	// The root's own path is swapped: re-resolving it would follow the
	// symlink (and the cwd, resolved the same way, would seem inside).
	if err := os.Rename(root, filepath.Join(base, "old-root")); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, filepath.Join(base, "elsewhere"), root)
	got, err = CheckCwd(root, filepath.Join(root, "sub"))
	check(t, "root swapped for a symlink", got, err, "", "no longer resolves to itself")
	got, err = CheckCwd(filepath.Join(base, "old-root"), "relative")
	check(t, "relative cwd", got, err, "", "is not an absolute path")
}

// TestSendRechecksCwd: a session's directory replaced by a symlink out of
// the root after the session started is refused at the next send
// (invalid_input, nothing sent to the runtime, the session not claimed);
// while it is a real directory, the runtime gets its real path.
func TestSendRechecksCwd(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	root := filepath.Join(base, "root")
	mustMkdir(t, filepath.Join(root, "app"))
	mustMkdir(t, filepath.Join(base, "outside"))
	mustSymlink(t, filepath.Join(root, "app"), filepath.Join(root, "link"))
	e := newTestEnv(t)
	rt := agenttest.New()
	e.svc = New(Config{Store: e.st.Store, Runtime: rt})
	e.st.Workspace(storetest.Workspace{ID: "w", RootPath: root})
	e.st.Session(storetest.Session{ID: "s", Workspace: "w", Thread: "thread-s", Cwd: filepath.Join(root, "link")})
	ctx := context.Background()
	if _, err := e.svc.Send(ctx, "w", "s", "first"); err != nil {
		t.Fatalf("send in a real directory: %v", err)
	}
	if sent := rt.Sent(); len(sent) != 1 || sent[0].Cwd != filepath.Join(root, "app") {
		t.Fatalf("sent %+v, want one turn in %s", sent, filepath.Join(root, "app"))
	}
	// The turn ends; the directory is swapped for a symlink out of the root.
	if err := e.st.Client.AgentSession.UpdateOneID("s").SetStatus(agentsession.StatusREADY).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(root, "app")); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, filepath.Join(base, "outside"), filepath.Join(root, "app"))
	_, err := e.svc.Send(ctx, "w", "s", "second")
	if ae := apperr.From(err); ae == nil || ae.Code != apperr.InvalidInput {
		t.Fatalf("send after the swap = %v, want invalid_input", err)
	}
	if sent := rt.Sent(); len(sent) != 1 {
		t.Errorf("%d turns sent, want only the first", len(sent))
	}
	if a := e.st.Client.AgentSession.GetX(ctx, "s"); a.Status != agentsession.StatusREADY {
		t.Errorf("session %s after the refusal, want READY", a.Status)
	}
}
