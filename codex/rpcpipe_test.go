package codex

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"

	"tuttid/jsonrpc"
)

// rpcPipe is a jsonrpc.Conn as the runtime makes one, with the app-server's
// side played over in-memory pipes: what Codex's replies do to a call,
// without a process.
type rpcPipe struct {
	c    *jsonrpc.Conn
	in   *bufio.Reader  // what the client wrote
	out  *io.PipeWriter // what the client reads
	note chan string    // notifications the client got
}

func newRPCPipe(t *testing.T, maxLine int) *rpcPipe {
	t.Helper()
	cr, sw := io.Pipe() // server -> client
	sr, cw := io.Pipe() // client -> server
	p := &rpcPipe{in: bufio.NewReader(sr), out: sw, note: make(chan string, 16)}
	p.c = jsonrpc.New(cr, cw, maxLine, testLogger(t), jsonrpc.Handlers{Notify: func(m string, _ json.RawMessage) { p.note <- m }})
	t.Cleanup(func() {
		sw.Close()
		sr.Close()
		<-p.c.Done()
		p.c.WaitRequests()
	})
	return p
}

// nextID reads the next request the client wrote and returns its id.
func (p *rpcPipe) nextID(t *testing.T) int {
	t.Helper()
	line, err := p.in.ReadBytes('\n')
	if err != nil {
		t.Fatalf("read client message: %v", err)
	}
	var m struct{ ID int }
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatalf("client wrote bad JSON %q: %v", line, err)
	}
	return m.ID
}

func (p *rpcPipe) send(t *testing.T, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if _, err := io.WriteString(p.out, l+"\n"); err != nil {
			t.Fatal(err)
		}
	}
}

type callResult struct {
	out map[string]any
	err error
}

// callAsync makes a call as the runtime does (callError names it).
func (p *rpcPipe) callAsync(ctx context.Context, method string) <-chan callResult {
	ch := make(chan callResult, 1)
	go func() {
		var out map[string]any
		err := p.c.Call(ctx, method, map[string]any{"x": 1}, &out)
		ch <- callResult{out, callError(method, err)}
	}()
	return ch
}

func recv[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(5 * time.Second):
		t.Fatal("timed out")
		panic("unreachable")
	}
}
