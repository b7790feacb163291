package appserver

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"sync"

	"tuttid/jsonrpc"
)

// logStderr logs each line the child writes to stderr and keeps the first
// ones in tail, until the stream ends.
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
