// Package sandbox runs a command tuttid starts on files an agent could
// have written (an exploration's check, a worktree's setup) inside the
// sandbox the Codex CLI ships (`codex sandbox`: bubblewrap and seccomp on
// Linux), never a home-made one, under a permission profile written for
// the run: read the runtime paths Codex calls minimal, read or write the
// worktree as the agent could, write a temporary directory of the run's
// own, no network. Nothing else of the machine is visible: not the
// person's home, not tuttid's data directory or token, not Codex's home.
//
// It imports only the standard library: shellrun and codebranch prepare
// their commands through it.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// ErrUnavailable says no sandbox can be made (no Codex, or a Codex
// without `codex sandbox`): the command does not run.
var ErrUnavailable = errors.New("sandbox unavailable")

// profile is the name of the permission profile each run defines.
const profile = "tuttid-command"

// Codex makes sandboxes with one Codex executable.
type Codex struct {
	bin  string
	home string

	mu     sync.Mutex
	native string // the executable Codex's sandbox re-executes, probed once
}

// NewCodex returns sandboxes made by bin (the --codex-bin: the npm
// wrapper or the native executable), with home as their CODEX_HOME: a
// directory of tuttid's own, so that neither the person's Codex config
// (a sandbox_mode there would replace the profile) nor their credentials
// are read. An empty bin makes every Prepare fail with ErrUnavailable.
func NewCodex(bin, home string) *Codex {
	return &Codex{bin: bin, home: home}
}

// For is the sandbox of a command run on files an agent wrote: none when
// that agent had full access (it could do the same itself) or when the
// person chose to run the workspace's commands unsandboxed; c otherwise,
// and ErrUnavailable when tuttid has no sandbox (c nil): never a fallback
// to running unsandboxed.
func (c *Codex) For(fullAccess, unsandboxed bool) (*Codex, error) {
	if fullAccess || unsandboxed {
		return nil, nil
	}
	if c == nil {
		return nil, fmt.Errorf("%w: this tuttid runs no Codex", ErrUnavailable)
	}
	return c, nil
}

// Policy is what one run may do.
type Policy struct {
	// Dir is the worktree the command runs in.
	Dir string
	// WriteDir: the command may write Dir (the agent's workspace-write);
	// false: read only (read-only).
	WriteDir bool
}

// Prepared is a command ready to start: Argv and Env for exec, Cleanup
// once it ended (it removes the run's temporary directory).
type Prepared struct {
	Argv    []string
	Env     []string
	Tmp     string
	Cleanup func()
}

// Prepare wraps argv (run in p.Dir) in Codex's sandbox. Its environment is
// base without the variables Codex keeps from an agent's commands (names
// with KEY, SECRET or TOKEN; tuttid's TUTTID_*), then extra, with HOME and
// TMPDIR the run's own writable directory (so that caches of go, npm or
// pip land somewhere they may).
func (c *Codex) Prepare(ctx context.Context, p Policy, argv []string, base, extra []string) (*Prepared, error) {
	if c == nil || c.bin == "" {
		return nil, fmt.Errorf("%w: tuttid knows no Codex executable", ErrUnavailable)
	}
	native, err := c.nativeBin(ctx)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(c.home, 0o700); err != nil {
		return nil, fmt.Errorf("%w: its Codex home: %v", ErrUnavailable, err)
	}
	tmp, err := os.MkdirTemp("", "tuttid-run-")
	if err != nil {
		return nil, fmt.Errorf("%w: a temporary directory: %v", ErrUnavailable, err)
	}
	dirAccess := "read"
	if p.WriteDir {
		dirAccess = "write"
	}
	// The native executable's directory is read: bubblewrap runs it again
	// inside as the sandbox's helper.
	prof := fmt.Sprintf(`permissions.%s={filesystem={":minimal"="read", ":tmpdir"="write", %s="read", ":workspace_roots"={"."=%q}}, network={enabled=false}}`,
		profile, tomlString(filepath.Dir(native)), dirAccess)
	// The native executable, not the npm wrapper: one process (node) less.
	wrapped := append([]string{native, "sandbox", "-c", prof, "-P", profile, "-C", p.Dir, "--"}, argv...)
	env := append(Env(base), extra...)
	env = append(env, "HOME="+tmp, "TMPDIR="+tmp, "TMP="+tmp, "TEMP="+tmp, "CODEX_HOME="+c.home)
	return &Prepared{Argv: wrapped, Env: env, Tmp: tmp, Cleanup: func() { _ = os.RemoveAll(tmp) }}, nil
}

// nativeBin is the executable `codex sandbox` runs as: the npm package's
// wrapper starts a native binary from a directory of its own. Codex, run
// with full access, tells it (the parent of the command it starts).
func (c *Codex) nativeBin(ctx context.Context) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.native != "" {
		return c.native, nil
	}
	if err := os.MkdirAll(c.home, 0o700); err != nil {
		return "", fmt.Errorf("%w: its Codex home: %v", ErrUnavailable, err)
	}
	cmd := exec.CommandContext(ctx, c.bin, "sandbox", "-P", ":danger-full-access", "-C", c.home, "--",
		"/bin/sh", "-c", `readlink /proc/$PPID/exe`)
	cmd.Env = append(Env(os.Environ()), "CODEX_HOME="+c.home)
	out, err := cmd.Output()
	if ctxErr := ctx.Err(); ctxErr != nil {
		return "", fmt.Errorf("sandbox: %w", ctxErr) // stopped, not unavailable
	}
	if err != nil {
		return "", fmt.Errorf("%w: %s sandbox did not run: %v", ErrUnavailable, c.bin, err)
	}
	native := strings.TrimSpace(string(out))
	if !filepath.IsAbs(native) {
		return "", fmt.Errorf("%w: %s sandbox named no executable (%q)", ErrUnavailable, c.bin, native)
	}
	c.native = native
	return native, nil
}

// Env is base without what Codex keeps from an agent's commands by
// default (shell_environment_policy's excludes: names holding KEY, SECRET
// or TOKEN, in any case) and without tuttid's own TUTTID_* settings:
// a command gets no more of tuttid's environment than the agent does.
func Env(base []string) []string {
	out := make([]string, 0, len(base))
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		if secretName(name) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func secretName(name string) bool {
	up := strings.ToUpper(name)
	return strings.HasPrefix(up, "TUTTID_") || strings.Contains(up, "KEY") ||
		strings.Contains(up, "SECRET") || strings.Contains(up, "TOKEN")
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
