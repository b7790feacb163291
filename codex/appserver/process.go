// Package appserver is the Codex app-server's child process: started in a
// process group of its own that dies with tuttid however tuttid dies
// (Pdeathsig from a fresh locked thread on Linux, and a watchdog shell in
// the group), a jsonrpc.Conn on its stdio, its stderr logged with its
// first lines kept to explain a failed start, stopped with a grace then
// killed, reaped with its pipes closed in the order the Conn needs.
//
// It speaks no Codex method (the handshake, the calls and the restarts
// are package codex's) and knows nothing of agent.
package appserver

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"time"

	"tuttid/jsonrpc"
	"tuttid/priority"
)

// Config is one launch of the child.
type Config struct {
	Path string   // the executable, already resolved
	Args []string // the arguments after Path
	// Env is the child's whole environment, and its watchdog's (so that it
	// holds nothing more).
	Env []string
	// MaxLineBytes bounds a line of stdout (the Conn's) and of stderr.
	MaxLineBytes int
	// Nice is the child's nice value (priority.LowerGroup): it and every
	// command it runs yield the CPU to the person's programs; 0 keeps
	// tuttid's.
	Nice     int
	Logger   *slog.Logger
	Handlers jsonrpc.Handlers // what the Conn does with what the child sends
}

// Process is one running child and the Conn talking to it.
type Process struct {
	cmd       *exec.Cmd
	conn      *jsonrpc.Conn
	stdin     *os.File
	startedAt time.Time
	exited    chan struct{}  // closed once the process is reaped and its pipes closed
	waitErr   error          // valid after exited
	stderr    stderrTail     // its first lines, to explain a failed start
	watchdog  *groupWatchdog // kills the process group if tuttid dies; nil if it did not start
	// stopKeeping ends priority.KeepAutogroups for the process.
	stopKeeping context.CancelFunc
}

// Start starts the child with a Conn on its stdio; nothing is sent yet.
func Start(cfg Config) (*Process, error) {
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("pipe: %w", err)
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		closeAll(stdinR, stdinW)
		return nil, fmt.Errorf("pipe: %w", err)
	}
	stderrR, stderrW, err := os.Pipe()
	if err != nil {
		closeAll(stdinR, stdinW, stdoutR, stdoutW)
		return nil, fmt.Errorf("pipe: %w", err)
	}

	cmd := exec.Command(cfg.Path, cfg.Args...)
	cmd.Env = cfg.Env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, stderrW
	setProcessGroup(cmd)
	if err := startProcess(cmd); err != nil {
		closeAll(stdinR, stdinW, stdoutR, stdoutW, stderrR, stderrW)
		return nil, fmt.Errorf("start %s: %w", cfg.Path, err)
	}
	// The child holds its own copies; ours would keep the pipes open.
	closeAll(stdinR, stdoutW, stderrW)

	log := cfg.Logger.With("pid", cmd.Process.Pid)
	if err := priority.LowerGroup(cmd.Process.Pid, cfg.Nice); err != nil {
		log.Warn("codex app-server runs at tuttid's CPU priority", "err", err)
	}
	// Codex's sandbox runs each command in a session of its own, which the
	// group's nice value does not reach where the kernel shares the CPU
	// between sessions first (priority.KeepAutogroups).
	keeping, stopKeeping := context.WithCancel(context.Background())
	go priority.KeepAutogroups(keeping, cmd.Process.Pid, cfg.Nice, log)
	watchdog, err := startWatchdog(cmd.Process.Pid, cmd.Env)
	if err != nil {
		// Pdeathsig still stops the direct child (on Linux).
		log.Warn("codex app-server runs without its watchdog: if tuttid dies, the process it runs may outlive it", "err", err)
	}
	p := &Process{
		cmd:         cmd,
		stdin:       stdinW,
		startedAt:   time.Now(),
		exited:      make(chan struct{}),
		conn:        jsonrpc.New(stdoutR, stdinW, cfg.MaxLineBytes, log, cfg.Handlers),
		watchdog:    watchdog,
		stopKeeping: stopKeeping,
	}
	stderrDone := make(chan struct{})
	go func() {
		defer close(stderrDone)
		logStderr(stderrR, cfg.MaxLineBytes, log, &p.stderr)
	}()
	go p.reap(stdoutR, stderrR, stderrDone)
	return p, nil
}

// Conn is the JSON-RPC connection on the child's stdio.
func (p *Process) Conn() *jsonrpc.Conn { return p.conn }

// Pid is the child's process id, and its process group's.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Stdin is our end of the child's stdin, the Conn's writer: only for a
// test that has another process hold it open.
func (p *Process) Stdin() *os.File { return p.stdin }

// StartedAt is when the child started.
func (p *Process) StartedAt() time.Time { return p.startedAt }

// Exited is closed once the child is reaped, its pipes closed and the
// Conn's answers done.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// WaitErr is how the child exited; valid once Exited is closed.
func (p *Process) WaitErr() error { return p.waitErr }

// Stderr is the first lines the child wrote to stderr, joined.
func (p *Process) Stderr() string { return p.stderr.String() }

// reap waits for the process, kills what is left of its group, and closes
// our pipe ends once the reader saw the end of the stream (or after a short
// grace, if a straggler outside the group still holds the pipe).
func (p *Process) reap(stdoutR, stderrR *os.File, stderrDone <-chan struct{}) {
	p.waitErr = p.cmd.Wait()
	p.stopKeeping()
	signalGroup(p.cmd, true)
	p.watchdog.stop()
	timer := time.NewTimer(2 * time.Second)
	defer timer.Stop()
	select {
	case <-p.conn.Done():
	case <-timer.C:
	}
	closeAll(stdoutR, stderrR, p.stdin)
	<-p.conn.Done()
	p.conn.WaitRequests() // their writes fail now that stdin is closed
	<-stderrDone
	close(p.exited)
}

// Stop asks the child to exit by closing its stdin, then escalates.
func (p *Process) Stop(grace time.Duration) {
	_ = p.stdin.Close()
	if waitClosed(p.exited, grace) {
		return
	}
	signalGroup(p.cmd, false)
	if waitClosed(p.exited, 2*time.Second) {
		return
	}
	p.Kill()
	<-p.exited
}

// Kill sends SIGKILL to the child's whole process group.
func (p *Process) Kill() { signalGroup(p.cmd, true) }

func waitClosed(ch <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		_ = f.Close()
	}
}
