package codebranch

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tuttid/apperr"
	"tuttid/logtest"
	"tuttid/store/storetest"
)

func newTestService(t *testing.T, timeout time.Duration) *Service {
	t.Helper()
	st := storetest.New(t)
	return New(Config{Store: st.Store, DataDir: t.TempDir(), SetupTimeout: timeout, Logger: logtest.Discard()})
}

func setupFork(t *testing.T) *ForkCode {
	dir := t.TempDir()
	return &ForkCode{Cwd: dir, in: ForkCodeInput{WorkspaceID: "w", ChildSessionID: "c", ParentCwd: "/parent"}}
}

func TestRunSetup(t *testing.T) {
	t.Setenv("TUTTID_TOKEN", "secret-token-value")
	cases := []struct {
		name, cmd string
		timeout   time.Duration
		code      apperr.Code // "" for success
		check     func(t *testing.T, fc *ForkCode)
	}{
		{name: "environment", cmd: `echo "$TUTTID_PARENT_DIR|$TUTTID_WORKTREE|$TUTTID_PORT_BASE|$TUTTID_TOKEN|$(pwd)"`,
			check: func(t *testing.T, fc *ForkCode) {
				want := "/parent|" + fc.Cwd + "|41000||" + fc.Cwd + "\n"
				if fc.SetupOutput != want || fc.PortBase != 41000 {
					t.Errorf("output %q port %d, want %q (no token)", fc.SetupOutput, fc.PortBase, want)
				}
			}},
		{name: "output bounded", cmd: `head -c 200000 /dev/zero | tr '\0' x; echo`,
			check: func(t *testing.T, fc *ForkCode) {
				if len(fc.SetupOutput) > MaxSetupOutput+200 || !strings.Contains(fc.SetupOutput, "output cut at 65536 bytes of 200001") {
					t.Errorf("output of %d bytes ends %q", len(fc.SetupOutput), fc.SetupOutput[len(fc.SetupOutput)-80:])
				}
			}},
		{name: "non-zero exit", cmd: `echo first; echo failing >&2; exit 7`, code: apperr.ForkCodeFailed,
			check: func(t *testing.T, fc *ForkCode) {
				if !strings.Contains(fc.SetupOutput, "failing") {
					t.Errorf("output %q", fc.SetupOutput)
				}
			}},
		{name: "time bound kills the group", cmd: `sleep 30 & sleep 30; echo never`, timeout: 300 * time.Millisecond, code: apperr.ForkCodeFailed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newTestService(t, c.timeout)
			fc := setupFork(t)
			start := time.Now()
			err := s.runSetup(context.Background(), fc, c.cmd)
			if c.code == "" && err != nil {
				t.Fatalf("runSetup: %v", err)
			}
			if c.code != "" && apperr.CodeOf(err) != c.code {
				t.Fatalf("runSetup = %v, want %s", err, c.code)
			}
			if time.Since(start) > 10*time.Second {
				t.Errorf("setup took %s", time.Since(start))
			}
			if c.check != nil {
				c.check(t, fc)
			}
			fc.Release()
		})
	}
}

func TestPortBasesDoNotCollide(t *testing.T) {
	s := newTestService(t, 0)
	ctx := context.Background()
	a, releaseA, err := s.reservePort(ctx, "w")
	if err != nil {
		t.Fatal(err)
	}
	b, releaseB, err := s.reservePort(ctx, "w")
	if err != nil {
		t.Fatal(err)
	}
	other, releaseO, err := s.reservePort(ctx, "w2")
	if err != nil {
		t.Fatal(err)
	}
	if a == b || b-a != portSpan || other != firstPortBase {
		t.Errorf("port bases %d %d (other workspace %d)", a, b, other)
	}
	releaseA()
	c, releaseC, _ := s.reservePort(ctx, "w")
	if c != a {
		t.Errorf("a released base is not reused: %d, want %d", c, a)
	}
	releaseB()
	releaseC()
	releaseO()
}

func TestOwnsPath(t *testing.T) {
	s := newTestService(t, 0)
	root := filepath.Join(s.dataDir, "worktrees")
	cases := map[string]bool{
		filepath.Join(root, "w", "s"):        true,
		filepath.Join(root, "w"):             false,
		root:                                 false,
		filepath.Join(root, "w", "s", "sub"): false,
		filepath.Join(root, "..", "x", "y"):  false,
		filepath.Join(s.dataDir, "a", "b"):   false,
		"relative/w/s":                       false,
		"/":                                  false,
	}
	for p, want := range cases {
		if got := s.ownsPath(p); got != want {
			t.Errorf("ownsPath(%q) = %v, want %v", p, got, want)
		}
	}
	if err := s.RemoveOrphanWorktree(context.Background(), "s", s.dataDir, "/nonexistent"); err == nil {
		t.Error("RemoveOrphanWorktree removed the data directory itself")
	}
	if _, err := os.Stat(s.dataDir); err != nil {
		t.Errorf("data directory gone: %v", err)
	}
}
