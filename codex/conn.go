package codex

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"

	"tuttid/agent"
)

// defaultMaxLineBytes bounds one JSON-RPC line. Thread histories come back
// in a single line, so the bound is generous.
const defaultMaxLineBytes = 64 << 20

// errLineTooLong marks a line that exceeded the bound; it was discarded.
var errLineTooLong = errors.New("line too long")

// rpcError is a JSON-RPC error object, as received or sent.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("json-rpc error %d: %s", e.Code, e.Message) }

// JSON-RPC error codes this package sends.
const codeMethodNotFound = -32601

// wireMessage is any line the server writes: a response (id and result or
// error), a notification (method, no id) or a request (id and method).
type wireMessage struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *rpcError       `json:"error,omitempty"`
}

// outgoing is what the client writes. Codex omits the "jsonrpc" member.
type outgoing struct {
	ID     any       `json:"id,omitempty"`
	Method string    `json:"method,omitempty"`
	Params any       `json:"params,omitempty"`
	Result any       `json:"result,omitempty"`
	Error  *rpcError `json:"error,omitempty"`
}

type rpcResult struct {
	result json.RawMessage
	err    error
}

// connHandlers receive what the server sends on its own initiative.
type connHandlers struct {
	// notify is called on the reader goroutine, in arrival order; it must
	// not block (it only enqueues).
	notify func(method string, params json.RawMessage)
	// request is called on the reader goroutine, in arrival order with the
	// notifications, for each server-to-client request; it must not block.
	// The func it returns decides the answer on its own goroutine and may
	// wait (for a person) until ctx ends, which happens when the stream
	// does; a nil error means result is sent.
	request func(id json.RawMessage, method string, params json.RawMessage) func(ctx context.Context) (any, *rpcError)
	// sent, when set, is called once a request is written (Config.OnSent).
	sent func(method string)
}

// conn is a JSON-RPC client over one line-delimited stream pair. It is
// independent of processes so it can be tested over pipes.
type conn struct {
	log     *slog.Logger
	maxLine int
	h       connHandlers

	wmu sync.Mutex
	w   io.Writer

	nextID atomic.Int64

	mu       sync.Mutex
	pending  map[int64]chan rpcResult
	closeErr error // set once the stream ended; every call fails with it
	done     chan struct{}

	// ctx ends with the stream; answers waiting for a person give up then.
	ctx    context.Context
	cancel context.CancelFunc

	reqs sync.WaitGroup // server-request goroutines; Add only on the reader
}

func newConn(r io.Reader, w io.Writer, maxLine int, log *slog.Logger, h connHandlers) *conn {
	if maxLine <= 0 {
		maxLine = defaultMaxLineBytes
	}
	c := &conn{
		log:     log,
		maxLine: maxLine,
		h:       h,
		w:       w,
		pending: make(map[int64]chan rpcResult),
		done:    make(chan struct{}),
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	go c.readLoop(r)
	return c
}

// Done is closed when the stream ended and every pending call has failed.
func (c *conn) Done() <-chan struct{} { return c.done }

// Err is why the stream ended (nil while it is up).
func (c *conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closeErr
}

// call sends a request and waits for its reply, for ctx, or for the stream
// to end. A reply that arrives after ctx ended is discarded by the reader.
func (c *conn) call(ctx context.Context, method string, params, out any) error {
	id := c.nextID.Add(1)
	ch := make(chan rpcResult, 1)
	c.mu.Lock()
	if c.closeErr != nil {
		err := c.closeErr
		c.mu.Unlock()
		return fmt.Errorf("codex %s: %w", method, err)
	}
	c.pending[id] = ch
	c.mu.Unlock()

	if err := c.write(outgoing{ID: id, Method: method, Params: params}); err != nil {
		c.forget(id)
		return fmt.Errorf("codex %s: %w", method, err)
	}
	if c.h.sent != nil {
		c.h.sent(method)
	}
	select {
	case res := <-ch:
		if res.err != nil {
			return fmt.Errorf("codex %s: %w", method, res.err)
		}
		if out == nil || len(res.result) == 0 {
			return nil
		}
		if err := json.Unmarshal(res.result, out); err != nil {
			return fmt.Errorf("codex %s: decode result: %w", method, err)
		}
		return nil
	case <-ctx.Done():
		c.forget(id)
		return fmt.Errorf("codex %s: no reply: %w", method, ctx.Err())
	}
}

// notify sends a notification (no reply).
func (c *conn) notify(method string, params any) error {
	if err := c.write(outgoing{Method: method, Params: params}); err != nil {
		return fmt.Errorf("codex %s: %w", method, err)
	}
	return nil
}

func (c *conn) forget(id int64) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

func (c *conn) write(msg outgoing) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	b = append(b, '\n')
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.Err(); err != nil {
		return err
	}
	if _, err := c.w.Write(b); err != nil {
		return fmt.Errorf("%w: write to codex app-server: %v", agent.ErrRuntimeUnavailable, err)
	}
	return nil
}

func (c *conn) readLoop(r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	var err error
	for {
		var line []byte
		line, err = readLine(br, c.maxLine)
		if errors.Is(err, errLineTooLong) {
			c.log.Warn("codex: over-long line from app-server skipped", "limit_bytes", c.maxLine)
			continue
		}
		if len(line) > 0 {
			c.dispatch(line)
		}
		if err != nil {
			break
		}
	}
	if errors.Is(err, io.EOF) {
		err = errors.New("app-server closed its output")
	}
	c.shutdown(fmt.Errorf("%w: %v", agent.ErrRuntimeUnavailable, err))
}

// shutdown fails every pending call at once and refuses new ones.
func (c *conn) shutdown(err error) {
	c.mu.Lock()
	if c.closeErr != nil {
		c.mu.Unlock()
		return
	}
	c.closeErr = err
	pending := c.pending
	c.pending = nil
	c.mu.Unlock()
	c.cancel()
	for _, ch := range pending {
		ch <- rpcResult{err: err}
	}
	// Server-request goroutines are not waited for here: one may be stuck
	// writing to a wedged child, and the supervisor must see done to kill
	// it. The owner waits for them with waitRequests once the pipes close.
	close(c.done)
}

// waitRequests waits for the goroutines answering server requests; call it
// after Done, once writes can no longer block (the write side is closed).
func (c *conn) waitRequests() { c.reqs.Wait() }

func (c *conn) dispatch(line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	var m wireMessage
	if err := json.Unmarshal(line, &m); err != nil {
		c.log.Warn("codex: malformed line from app-server skipped", "err", err, "line", preview(line))
		return
	}
	hasID := len(m.ID) > 0 && !bytes.Equal(m.ID, []byte("null"))
	switch {
	case hasID && m.Method != "":
		c.serveRequest(m)
	case m.Method != "":
		if c.h.notify != nil {
			c.h.notify(m.Method, m.Params)
		}
	case hasID:
		c.deliver(m)
	default:
		c.log.Warn("codex: line is neither request, response nor notification", "line", preview(line))
	}
}

func (c *conn) deliver(m wireMessage) {
	var id int64
	if err := json.Unmarshal(m.ID, &id); err != nil {
		c.log.Warn("codex: response with a foreign id skipped", "id", string(m.ID))
		return
	}
	c.mu.Lock()
	ch, ok := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	if !ok {
		c.log.Debug("codex: late or unknown reply discarded", "id", id)
		return
	}
	if m.Error != nil {
		ch <- rpcResult{err: m.Error}
		return
	}
	ch <- rpcResult{result: m.Result}
}

// serveRequest answers a server-to-client request, always: an unanswered
// approval stalls its turn forever.
func (c *conn) serveRequest(m wireMessage) {
	var answer func(context.Context) (any, *rpcError)
	if c.h.request != nil {
		answer = c.h.request(m.ID, m.Method, m.Params)
	}
	c.reqs.Add(1)
	go func() {
		defer c.reqs.Done()
		var result any
		rerr := &rpcError{Code: codeMethodNotFound, Message: "method not supported by tuttid: " + m.Method}
		if answer != nil {
			result, rerr = answer(c.ctx)
		}
		reply := outgoing{ID: m.ID, Error: rerr}
		if rerr == nil {
			if result == nil {
				result = struct{}{}
			}
			reply.Result = result
		}
		if err := c.write(reply); err != nil {
			c.log.Warn("codex: could not answer server request", "method", m.Method, "err", err)
		}
	}()
}

// readLine reads one '\n'-terminated line of at most max bytes. An
// over-long line is consumed and reported as errLineTooLong so the reader
// can go on with the next one.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var buf []byte
	tooLong := false
	for {
		frag, err := br.ReadSlice('\n')
		if !tooLong {
			n := len(buf) + len(frag)
			if err == nil {
				n-- // the newline itself
			}
			if n > max {
				tooLong = true
				buf = nil
			} else {
				buf = append(buf, frag...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if tooLong {
			if err == nil {
				return nil, errLineTooLong
			}
			return nil, err
		}
		return buf, err
	}
}

func preview(b []byte) string {
	const n = 200
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
