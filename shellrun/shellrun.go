// Package shellrun runs a person's shell command (an exploration's
// checkCommand; later a workspace's worktreeSetup, which keeps the first
// 64 KiB of output where this keeps the last) with `/bin/sh -c` in a
// directory, bounded in time and in output, in an environment without
// tuttid's own settings, at the agent's CPU priority (Command.Nice), in
// Codex's sandbox when Command.Sandbox is set. It imports only the
// standard library, priority and sandbox: a caller maps a Result
// to its own errors and logs it with its own keys. Explore's checks run
// through it.
//
// The command line is never logged here: a person may put a secret in it.
package shellrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"tuttid/priority"
	"tuttid/sandbox"
)

const (
	// DefaultMaxOutput is how much output a Result keeps when
	// Command.MaxOutput is 0: the last 64 KiB, where a failing test's
	// summary is.
	DefaultMaxOutput = 64 << 10
	// DefaultDrain is how long Run reads output after the shell exits when
	// Command.Drain is 0: a process that left the group (setsid) or was
	// kept with KeepBackground may hold the pipe open forever.
	DefaultDrain = 2 * time.Second
	// secretPrefix starts every variable that configures tuttid
	// (TUTTID_TOKEN among them): none reaches the command unless the caller
	// adds it back in Command.Env.
	secretPrefix = "TUTTID_"
)

// Command is one run.
type Command struct {
	// Line is the shell command line, run as /bin/sh -c Line.
	Line string
	// Dir is the working directory; it must exist.
	Dir string
	// Env holds the caller's NAME=value extras (TUTTID_PORT_BASE,
	// TUTTID_WORKTREE, ...), added after tuttid's environment without its
	// TUTTID_* variables; an extra overrides a variable of the same name.
	Env []string
	// Timeout bounds the run; 0 means only ctx bounds it. At the bound the
	// whole process group is killed and the Result says TimedOut.
	Timeout time.Duration
	// MaxOutput is how many bytes of output (stdout and stderr
	// interleaved, as written) the Result keeps, the last ones; 0 means
	// DefaultMaxOutput.
	MaxOutput int
	// KeepBackground leaves alive what the command started in the
	// background once the shell exits (a setup that starts a server). By
	// default the process group is killed when the shell exits, so a check
	// leaves nothing running (a server holding the branch's ports).
	KeepBackground bool
	// Drain bounds the reading of output after the shell exits; 0 means
	// DefaultDrain.
	Drain time.Duration
	// OnStart, when set, is called once the command runs, with its process
	// group id (the shell's pid): a caller records it so that a start of
	// tuttid after a crash can kill a group left running (a kill -9 of
	// tuttid does not reach it).
	OnStart func(pgid int)
	// Nice is the command's nice value (priority.LowerGroup, --agent-nice):
	// a test suite in eight worktrees yields the CPU to the person's
	// programs; 0 keeps tuttid's.
	Nice int
	// BaseEnv replaces os.Environ() as the environment the TUTTID_*
	// variables are stripped from (tests); nil means os.Environ().
	BaseEnv []string
	// Sandbox, when set, runs the command in Codex's sandbox
	// (sandbox.Codex.Prepare): Dir writable unless ReadOnly, a temporary
	// HOME of its own, no network, nothing else of the machine readable.
	// Nil runs it as tuttid's user.
	Sandbox  *sandbox.Codex
	ReadOnly bool
}

// Result is what a run did.
type Result struct {
	// ExitCode is the shell's exit status; -1 when a signal ended it (the
	// time bound's kill among them).
	ExitCode int
	// Duration is from the start to the shell's exit.
	Duration time.Duration
	// Output is the last MaxOutput bytes of the output, cut after a whole
	// UTF-8 character; Truncated says bytes before it were dropped.
	Output    string
	Truncated bool
	// OutputBytes is how many bytes the command wrote in all.
	OutputBytes int64
	// TimedOut says the run reached Command.Timeout and its process group
	// was killed.
	TimedOut bool
	// NiceErr says why the command ran at tuttid's CPU priority rather
	// than at Command.Nice (for the caller's log); nil when it did not.
	NiceErr error
}

// Passed reports a run that exited 0 within its bound.
func (r Result) Passed() bool { return r.ExitCode == 0 && !r.TimedOut }

// Run runs c and waits for it. A command that fails or times out is not an
// error: the Result says so. Run returns an error when the command could
// not start (no such directory, no /bin/sh) or when ctx ended first (the
// group is killed; the error wraps ctx.Err() and the partial Result is
// returned with it).
func Run(ctx context.Context, c Command) (Result, error) {
	max := c.MaxOutput
	if max <= 0 {
		max = DefaultMaxOutput
	}
	drain := c.Drain
	if drain <= 0 {
		drain = DefaultDrain
	}
	runCtx, cancel := ctx, context.CancelFunc(func() {})
	if c.Timeout > 0 {
		runCtx, cancel = context.WithTimeout(ctx, c.Timeout)
	}
	defer cancel()

	// One pipe for both streams, written by the command's processes
	// directly: Wait then returns when the shell exits, not when the last
	// background process closes its copy of the pipe.
	pr, pw, err := os.Pipe()
	if err != nil {
		return Result{ExitCode: -1}, fmt.Errorf("shellrun: output pipe: %w", err)
	}
	defer pr.Close()

	line := []string{"/bin/sh", "-c", c.Line}
	var env []string
	if c.Sandbox == nil {
		env = Env(c.BaseEnv, c.Env...)
	} else {
		base := c.BaseEnv
		if base == nil {
			base = os.Environ()
		}
		p, err := c.Sandbox.Prepare(ctx, sandbox.Policy{Dir: c.Dir, WriteDir: !c.ReadOnly}, line, base, c.Env)
		if err != nil {
			pw.Close()
			return Result{ExitCode: -1}, fmt.Errorf("shellrun: %w", err)
		}
		defer p.Cleanup()
		line, env = p.Argv, p.Env
	}
	// Started at its nice value (without nice(1): lowered right after).
	argv, started := priority.Prefixed(c.Nice, line)
	cmd := exec.CommandContext(runCtx, argv[0], argv[1:]...)
	cmd.Dir = c.Dir
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = pw, pw
	// Its own process group, killed whole: a child or grandchild (a test
	// binary, a server) must not outlive the bound. Its own session too
	// (priority.Prefixed).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	var killed atomic.Bool // by the bound or ctx, not by a race with a normal exit
	cmd.Cancel = func() error {
		killed.Store(true)
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}

	start := time.Now()
	if err := cmd.Start(); err != nil {
		pw.Close()
		return Result{ExitCode: -1}, fmt.Errorf("shellrun: start in %s: %w", c.Dir, err)
	}
	pw.Close() // the command's processes hold the only write ends now
	// niceErr says why the command runs at tuttid's priority (it runs all
	// the same).
	stopKeeping, niceErr := started(runCtx, cmd.Process.Pid, nil)
	defer stopKeeping()
	if c.OnStart != nil {
		c.OnStart(cmd.Process.Pid)
	}

	tail := &tailBuffer{max: max}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(tail, pr) // ends at EOF, or when pr is closed below
	}()

	waitErr := cmd.Wait()
	res := Result{Duration: time.Since(start), ExitCode: cmd.ProcessState.ExitCode(), NiceErr: niceErr}
	if !c.KeepBackground {
		// ESRCH when the group is already gone is fine.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	t := time.NewTimer(drain)
	select {
	case <-copied:
		t.Stop()
	case <-t.C:
		pr.Close() // a process outside the group still holds the pipe
		<-copied
	}
	res.Output, res.Truncated, res.OutputBytes = tail.result()

	if killed.Load() {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return res, fmt.Errorf("shellrun: stopped after %s: %w", res.Duration.Round(time.Millisecond), ctxErr)
		}
		res.TimedOut = true
		return res, nil
	}
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) {
		return res, fmt.Errorf("shellrun: wait: %w", waitErr)
	}
	return res, nil
}

// Env is base (os.Environ() when nil) without any variable whose name
// starts with TUTTID_, in any case, followed by extra. exec keeps the last
// of duplicate names, so an extra overrides an inherited variable.
func Env(base []string, extra ...string) []string {
	if base == nil {
		base = os.Environ()
	}
	out := make([]string, 0, len(base)+len(extra))
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		if len(name) >= len(secretPrefix) && strings.EqualFold(name[:len(secretPrefix)], secretPrefix) {
			continue
		}
		out = append(out, kv)
	}
	return append(out, extra...)
}

// tailBuffer keeps the last max bytes written and counts them all.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
	n   int64
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.n += int64(len(p))
	if len(p) >= b.max {
		b.buf = append(b.buf[:0], p[len(p)-b.max:]...)
		return len(p), nil
	}
	b.buf = append(b.buf, p...)
	// Shift only when twice the bound is held: amortized copying.
	if len(b.buf) > 2*b.max {
		b.buf = append(b.buf[:0], b.buf[len(b.buf)-b.max:]...)
	}
	return len(p), nil
}

// result is the kept tail, starting at a whole character when bytes
// before it were dropped.
func (b *tailBuffer) result() (string, bool, int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.buf
	if len(out) > b.max {
		out = out[len(out)-b.max:]
	}
	cut := b.n > int64(len(out))
	if cut {
		for i := 0; i < utf8.UTFMax && len(out) > 0 && !utf8.RuneStart(out[0]); i++ {
			out = out[1:]
		}
	}
	return string(out), cut, b.n
}
