package sandbox_test

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"tuttid/codex/codextest"
	"tuttid/sandbox"
)

// run runs line in dir under the policy through the real `codex sandbox`
// and returns its combined output.
func run(t *testing.T, c *sandbox.Codex, p sandbox.Policy, line string, base []string) string {
	t.Helper()
	prep, err := c.Prepare(context.Background(), p, []string{"/bin/sh", "-c", line}, base, []string{"TUTTID_WORKTREE=" + p.Dir})
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	defer prep.Cleanup()
	cmd := exec.Command(prep.Argv[0], prep.Argv[1:]...)
	cmd.Dir, cmd.Env = p.Dir, prep.Env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("sandboxed run: %v\n%s", err, out)
	}
	return string(out)
}

// TestSandboxConfinesWhatAnAgentCouldWrite runs what a prompt-injected
// branch would put in its check script: write outside the worktree, read
// the home directory, tuttid's data and Codex's home, reach the network,
// copy tuttid's environment. None of it happens; the worktree (and the
// run's own temporary HOME) stays writable.
func TestSandboxConfinesWhatAnAgentCouldWrite(t *testing.T) {
	bin := codextest.Binary(t)
	root := t.TempDir()
	wt := filepath.Join(root, "worktree")
	outside := filepath.Join(root, "outside")
	data := filepath.Join(root, "data")
	for _, d := range []string{wt, outside, data} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(data, "token"), []byte("tuttid-token-value"), 0o600); err != nil {
		t.Fatal(err)
	}
	home, _ := os.UserHomeDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("reached\n"))
			c.Close()
		}
	}()
	c := sandbox.NewCodex(bin, filepath.Join(data, "sandbox"))
	base := append(os.Environ(), "TUTTID_TOKEN=tuttid-token-value", "OPENAI_API_KEY=sk-secret", "GITHUB_TOKEN=gh-secret",
		"MY_SECRET=s3", "PLAIN=kept")
	probe := `
echo inside > in.txt && echo wrote-worktree
echo escaped > ` + outside + `/escaped.txt 2>/dev/null && echo wrote-outside
cat ` + filepath.Join(data, "token") + ` 2>/dev/null && echo read-token
ls ` + home + ` >/dev/null 2>&1 && echo read-home
ls ` + os.Getenv("CODEX_HOME") + `/ >/dev/null 2>&1 && [ -n "` + os.Getenv("CODEX_HOME") + `" ] && echo read-codex-home
echo cache > "$HOME/cache" && echo wrote-home-tmp
env > env.txt
(exec 3<>/dev/tcp/127.0.0.1/` + portOf(ln) + ` && echo reached-network) 2>/dev/null
python3 -c 'import socket; socket.create_connection(("127.0.0.1",` + portOf(ln) + `),1); print("reached-network")' 2>/dev/null
true`
	out := run(t, c, sandbox.Policy{Dir: wt, WriteDir: true}, probe, base)
	for _, want := range []string{"wrote-worktree", "wrote-home-tmp"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, never := range []string{"wrote-outside", "read-token", "read-home", "read-codex-home", "reached-network"} {
		if strings.Contains(out, never) {
			t.Errorf("the sandboxed command could %s:\n%s", never, out)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "escaped.txt")); err == nil {
		t.Error("a file outside the worktree was made")
	}
	env, err := os.ReadFile(filepath.Join(wt, "env.txt"))
	if err != nil {
		t.Fatalf("env.txt: %v", err)
	}
	for _, secret := range []string{"tuttid-token-value", "sk-secret", "gh-secret", "s3"} {
		if strings.Contains(string(env), "="+secret) {
			t.Errorf("the environment copied into the worktree holds %q:\n%s", secret, env)
		}
	}
	if !strings.Contains(string(env), "PLAIN=kept") || !strings.Contains(string(env), "TUTTID_WORKTREE="+wt) {
		t.Errorf("the environment lost what it keeps:\n%s", env)
	}

	// A read-only branch's check reads the worktree and writes nothing there.
	out = run(t, c, sandbox.Policy{Dir: wt, WriteDir: false}, `cat in.txt; echo again > in.txt 2>/dev/null && echo wrote-worktree; true`, base)
	if !strings.Contains(out, "inside") || strings.Contains(out, "wrote-worktree") {
		t.Errorf("read-only: %q", out)
	}
}

func portOf(ln net.Listener) string {
	_, p, _ := net.SplitHostPort(ln.Addr().String())
	return p
}

func TestPrepareWithoutCodex(t *testing.T) {
	for _, c := range []*sandbox.Codex{nil, sandbox.NewCodex("", t.TempDir()), sandbox.NewCodex(filepath.Join(t.TempDir(), "no-codex"), t.TempDir())} {
		_, err := c.Prepare(context.Background(), sandbox.Policy{Dir: t.TempDir()}, []string{"true"}, nil, nil)
		if !errors.Is(err, sandbox.ErrUnavailable) {
			t.Errorf("Prepare = %v, want ErrUnavailable", err)
		}
	}
}

func TestEnv(t *testing.T) {
	got := sandbox.Env([]string{"PATH=/bin", "TUTTID_TOKEN=x", "tuttid_db=y", "AWS_SECRET_ACCESS_KEY=z", "api_key=k",
		"GH_TOKEN=t", "HOME=/root", "LANG=C"})
	want := []string{"PATH=/bin", "HOME=/root", "LANG=C"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Env = %v, want %v", got, want)
	}
}

// TestFor: the sandbox a command gets is none only where its agent had
// full access or the person chose so; never none because tuttid has none.
func TestFor(t *testing.T) {
	c := sandbox.NewCodex("codex", t.TempDir())
	for _, tc := range []struct {
		name                    string
		c                       *sandbox.Codex
		fullAccess, unsandboxed bool
		want                    *sandbox.Codex
		unavailable             bool
	}{
		{"workspace-write", c, false, false, c, false},
		{"full-access", c, true, false, nil, false},
		{"the person's NONE", c, false, true, nil, false},
		{"no sandbox to be had", nil, false, false, nil, true},
		{"no sandbox, full-access", nil, true, false, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.c.For(tc.fullAccess, tc.unsandboxed)
			if got != tc.want || errors.Is(err, sandbox.ErrUnavailable) != tc.unavailable {
				t.Errorf("For = %p, %v; want %p, unavailable %v", got, err, tc.want, tc.unavailable)
			}
		})
	}
}
