package codex

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"tuttid/agent"
	"tuttid/jsonrpc"
)

// process is one running app-server and the client talking to it.
type process struct {
	gen       uint64 // which launch this is; threads loaded here remember it
	cmd       *exec.Cmd
	conn      *jsonrpc.Conn
	stdin     *os.File
	startedAt time.Time
	exited    chan struct{}  // closed once the process is reaped and its pipes closed
	waitErr   error          // valid after exited
	stderr    stderrTail     // its first lines, to explain a failed start
	watchdog  *groupWatchdog // kills the process group if tuttid dies; nil if it did not start
}

// resolveBin finds the executable, with an error that says how to fix it.
func resolveBin(bin string) (string, error) {
	path, err := exec.LookPath(bin)
	if err != nil {
		return "", fmt.Errorf("%w: codex binary %q not found (%v): install it (npm install -g @openai/codex) or point tuttid at it with --codex-bin or CODEX_BIN",
			agent.ErrRuntimeUnavailable, bin, err)
	}
	return path, nil
}

// spawn starts the app-server and performs the initialize handshake.
func spawn(ctx context.Context, cfg Config, gen uint64, h jsonrpc.Handlers) (*process, error) {
	path, err := resolveBin(cfg.Bin)
	if err != nil {
		return nil, err
	}
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", agent.ErrRuntimeUnavailable, err)
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		closeAll(stdinR, stdinW)
		return nil, fmt.Errorf("%w: %v", agent.ErrRuntimeUnavailable, err)
	}
	stderrR, stderrW, err := os.Pipe()
	if err != nil {
		closeAll(stdinR, stdinW, stdoutR, stdoutW)
		return nil, fmt.Errorf("%w: %v", agent.ErrRuntimeUnavailable, err)
	}

	cmd := exec.Command(path, cfg.Args...)
	cmd.Env = childEnv(cfg.Env)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, stderrW
	setProcessGroup(cmd)
	if err := startProcess(cmd); err != nil {
		closeAll(stdinR, stdinW, stdoutR, stdoutW, stderrR, stderrW)
		return nil, fmt.Errorf("%w: start %s: %v", agent.ErrRuntimeUnavailable, path, err)
	}
	// The child holds its own copies; ours would keep the pipes open.
	closeAll(stdinR, stdoutW, stderrW)

	log := cfg.Logger.With("pid", cmd.Process.Pid)
	watchdog, err := startWatchdog(cmd.Process.Pid, cmd.Env)
	if err != nil {
		// Pdeathsig still stops the direct child (on Linux).
		log.Warn("codex app-server runs without its watchdog: if tuttid dies, the process it runs may outlive it", "err", err)
	}
	p := &process{
		gen:       gen,
		cmd:       cmd,
		stdin:     stdinW,
		startedAt: time.Now(),
		exited:    make(chan struct{}),
		conn:      jsonrpc.New(stdoutR, stdinW, cfg.MaxLineBytes, log, h),
		watchdog:  watchdog,
	}
	stderrDone := make(chan struct{})
	go func() {
		defer close(stderrDone)
		logStderr(stderrR, cfg.MaxLineBytes, log, &p.stderr)
	}()
	go p.reap(stdoutR, stderrR, stderrDone)

	if err := p.handshake(ctx, cfg); err != nil {
		p.kill()
		<-p.exited
		if tail := p.stderr.String(); tail != "" {
			err = fmt.Errorf("%w; codex said: %s", err, tail)
		}
		return nil, err
	}
	log.Info("codex app-server started", "bin", path, "gen", gen)
	return p, nil
}

// reap waits for the process, kills what is left of its group, and closes
// our pipe ends once the reader saw the end of the stream (or after a short
// grace, if a straggler outside the group still holds the pipe).
func (p *process) reap(stdoutR, stderrR *os.File, stderrDone <-chan struct{}) {
	p.waitErr = p.cmd.Wait()
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

func (p *process) handshake(ctx context.Context, cfg Config) error {
	ctx, cancel := context.WithTimeout(ctx, cfg.HandshakeTimeout)
	defer cancel()
	type clientInfo struct {
		Name    string  `json:"name"`
		Title   *string `json:"title"`
		Version string  `json:"version"`
	}
	type capabilities struct {
		ExperimentalAPI    bool `json:"experimentalApi"`
		RequestAttestation bool `json:"requestAttestation"`
	}
	params := struct {
		ClientInfo   clientInfo    `json:"clientInfo"`
		Capabilities *capabilities `json:"capabilities"`
	}{ClientInfo: clientInfo{Name: "tuttid", Version: cfg.ClientVersion}}
	if cfg.ExperimentalPlanMode {
		params.Capabilities = &capabilities{ExperimentalAPI: true}
	}
	if err := p.conn.Call(ctx, "initialize", params, nil); err != nil {
		return handshakeError(callError("initialize", err))
	}
	if err := p.conn.Notify("initialized", nil); err != nil {
		return handshakeError(callError("initialized", err))
	}
	return nil
}

func handshakeError(err error) error {
	if errors.Is(err, agent.ErrRuntimeUnavailable) {
		return fmt.Errorf("codex app-server handshake: %w", err)
	}
	return fmt.Errorf("%w: codex app-server handshake: %v", agent.ErrRuntimeUnavailable, err)
}

// stop asks the app-server to exit by closing its stdin, then escalates.
func (p *process) stop(grace time.Duration) {
	_ = p.stdin.Close()
	if waitClosed(p.exited, grace) {
		return
	}
	signalGroup(p.cmd, false)
	if waitClosed(p.exited, 2*time.Second) {
		return
	}
	p.kill()
	<-p.exited
}

func (p *process) kill() { signalGroup(p.cmd, true) }

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

func logStderr(r io.Reader, maxLine int, log interface {
	Debug(string, ...any)
}, tail *stderrTail) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := jsonrpc.ReadLine(br, maxLine)
		if len(line) > 0 {
			text := string(trimNewline(line))
			log.Debug("codex app-server stderr", "line", text)
			tail.add(text)
		}
		if err != nil && !errors.Is(err, jsonrpc.ErrLineTooLong) {
			return
		}
	}
}

func trimNewline(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		_ = f.Close()
	}
}

// stderrTail keeps the first lines codex writes to stderr: when it fails
// to start, they hold its error (a Rust backtrace follows and is dropped).
type stderrTail struct {
	mu        sync.Mutex
	lines     []string
	backtrace bool
}

const stderrTailLines = 5

func (t *stderrTail) add(line string) {
	line = strings.TrimSpace(line)
	if len(line) > 500 {
		line = line[:500] + "…"
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if strings.HasPrefix(line, "Stack backtrace") {
		t.backtrace = true
	}
	if line == "" || t.backtrace || len(t.lines) >= stderrTailLines {
		return
	}
	t.lines = append(t.lines, line)
}

func (t *stderrTail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, " | ")
}
