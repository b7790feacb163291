package codebranch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"tuttid/agent"
	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/ent/sessioncode"
	"tuttid/ent/workspace"
	"tuttid/priority"
	"tuttid/sandbox"
)

// A workspace's worktreeSetup runs in each new worktree before the fork
// answers (the contract's "Setup of a new worktree").
const (
	// MaxSetupOutput bounds the output kept (SessionCode.setupOutput): its
	// first part, then a note of what was cut.
	MaxSetupOutput = 64 << 10
	// DefaultSetupTimeout bounds a setup that hangs.
	DefaultSetupTimeout = 10 * time.Minute
	// firstPortBase and portSpan: TUTTID_PORT_BASE is the first of
	// portSpan ports from firstPortBase up that no live worktree of the
	// workspace holds.
	firstPortBase = 41000
	portSpan      = 10
	lastPortBase  = 60990
)

// setupState is the Service's: the time bound and the port bases handed
// out to forks still in flight (their rows are not stored yet).
type setupState struct {
	timeout time.Duration
	nice    int // the setup's nice value (Config.AgentNice)
	mu      sync.Mutex
	pending map[string]map[int]bool // workspace -> port bases
}

// reservePort picks the workspace's first free port base: none a live
// worktree's row holds, none a fork in flight holds.
func (s *Service) reservePort(ctx context.Context, workspaceID string) (int, func(), error) {
	rows, err := s.store.Client.SessionCode.Query().
		Where(sessioncode.WorkspaceID(workspaceID), sessioncode.WorktreePresent(true), sessioncode.PortBaseGT(0)).
		Select(sessioncode.FieldPortBase).Ints(ctx)
	if err != nil {
		return 0, nil, apperr.Storage(err, "read the workspace's port bases")
	}
	used := map[int]bool{}
	for _, p := range rows {
		used[p] = true
	}
	s.setup.mu.Lock()
	defer s.setup.mu.Unlock()
	if s.setup.pending == nil {
		s.setup.pending = map[string]map[int]bool{}
	}
	mine := s.setup.pending[workspaceID]
	if mine == nil {
		mine = map[int]bool{}
		s.setup.pending[workspaceID] = mine
	}
	for p := firstPortBase; p <= lastPortBase; p += portSpan {
		if used[p] || mine[p] {
			continue
		}
		mine[p] = true
		return p, func() {
			s.setup.mu.Lock()
			defer s.setup.mu.Unlock()
			delete(mine, p)
		}, nil
	}
	return 0, nil, apperr.New(apperr.ForkCodeFailed, "every port base of the workspace is taken (%d live worktrees)", len(used))
}

// runSetup runs the setup command with sh -c in the child's cwd, in the
// sandbox fc.confine when set (setupSandbox). Its environment is tuttid's
// minus every TUTTID_* variable (the token among them), plus
// TUTTID_PARENT_DIR, TUTTID_WORKTREE and TUTTID_PORT_BASE.
func (s *Service) runSetup(ctx context.Context, fc *ForkCode, command string) error {
	port, release, err := s.reservePort(ctx, fc.in.WorkspaceID)
	if err != nil {
		return err
	}
	fc.release = release
	fc.PortBase = port
	timeout := s.setup.timeout
	if timeout <= 0 {
		timeout = DefaultSetupTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	line := []string{"/bin/sh", "-c", command}
	extra := []string{"TUTTID_PARENT_DIR=" + fc.in.ParentCwd, "TUTTID_WORKTREE=" + fc.Cwd, "TUTTID_PORT_BASE=" + strconv.Itoa(port)}
	env := append(setupEnv(os.Environ()), extra...)
	if fc.confine != nil {
		// The child's cwd is what its agent may write (Codex's writable
		// root is the thread's cwd).
		p, err := fc.confine.Prepare(ctx, sandbox.Policy{Dir: fc.Cwd, WriteDir: true}, line, os.Environ(), extra)
		if err != nil {
			return apperr.Wrap(err, apperr.ForkCodeFailed,
				"the workspace's worktreeSetup could not run: no sandbox could be made for it (%v); nothing was created. "+
					"To run it as you, unsandboxed, set the workspace's commandSandbox to NONE", err)
		}
		defer p.Cleanup()
		line, env = p.Argv, p.Env
	}
	// Started at its nice value (without nice(1): lowered right after).
	argv, started := priority.Prefixed(s.setup.nice, line)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = fc.Cwd
	cmd.Env = env
	out := &boundedBuffer{max: MaxSetupOutput}
	cmd.Stdout, cmd.Stderr = out, out
	// Its own process group, killed whole on the time bound: a setup that
	// starts a server in the background must not outlive it. Its own
	// session too (priority.Prefixed).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err = cmd.Start()
	if err == nil {
		stopKeeping, perr := started(ctx, cmd.Process.Pid, s.log)
		if perr != nil {
			s.log.WarnContext(ctx, "fork: worktree setup runs at tuttid's CPU priority", "err", perr)
		}
		err = cmd.Wait()
		stopKeeping()
	}
	fc.SetupOutput = out.String()
	if err == nil {
		s.log.InfoContext(ctx, "fork: worktree setup ran", "workspace", fc.in.WorkspaceID,
			"child_session", fc.in.ChildSessionID, "elapsed", time.Since(start), "output_bytes", out.n)
		return nil
	}
	tail := lastLines(fc.SetupOutput, 5)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return apperr.Wrap(err, apperr.ForkCodeFailed,
			"the workspace's worktreeSetup ran longer than %s and was stopped; nothing was created. Its last output: %s", timeout, tail)
	}
	return apperr.Wrap(err, apperr.ForkCodeFailed,
		"the workspace's worktreeSetup failed (%s); nothing was created. Its last output: %s", exitText(err), tail)
}

// setupSandbox is where the workspace's setup runs for a child in the
// given permission mode: the setup runs files of the forked checkpoint,
// which an agent may have written, so it gets no more power than the
// child's agent (its worktree writable, nothing else): nil (as the
// person) for a full-access child or a workspace whose commandSandbox is
// NONE, else Codex's sandbox, and an error when tuttid has none.
func (s *Service) setupSandbox(w *ent.Workspace, mode string) (*sandbox.Codex, error) {
	c, err := s.sandbox.For(mode == agent.PermissionFullAccess, w.CommandSandbox == workspace.CommandSandboxNONE)
	if err != nil {
		return nil, apperr.Wrap(err, apperr.ForkCodeFailed,
			"the workspace's worktreeSetup could not run: this tuttid has no sandbox for it (no Codex); nothing was created. "+
				"To run it as you, unsandboxed, set the workspace's commandSandbox to NONE")
	}
	return c, nil
}

// setupEnv is env without TUTTID_* (tuttid's token, database, flags).
func setupEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, "TUTTID_") {
			out = append(out, kv)
		}
	}
	return out
}

func exitText(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return fmt.Sprintf("exit status %d", ee.ExitCode())
	}
	return err.Error()
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	t := strings.Join(lines, "\n")
	if t == "" {
		return "(none)"
	}
	return t
}

// boundedBuffer keeps the first max bytes written and counts the rest.
type boundedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
	n   int
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.n += len(p)
	if room := b.max - b.buf.Len(); room > 0 {
		if len(p) > room {
			b.buf.Write(p[:room])
		} else {
			b.buf.Write(p)
		}
	}
	return len(p), nil
}

func (b *boundedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.n > b.buf.Len() {
		return b.buf.String() + fmt.Sprintf("\n[tuttid: output cut at %d bytes of %d]\n", b.buf.Len(), b.n)
	}
	return b.buf.String()
}
