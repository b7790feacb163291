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
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"tuttid/agent"
)

// errLineTooLong marks a line that exceeded the bound; it was consumed and
// discarded. The error readLine returns is a *lineTooLongError.
var errLineTooLong = errors.New("line too long")

// lineTooLongError says how long the discarded line was and keeps its
// first bytes, enough to tell whose reply it was.
type lineTooLongError struct {
	Size int
	Head []byte
}

func (e *lineTooLongError) Error() string {
	return fmt.Sprintf("line of %d bytes", e.Size)
}

func (e *lineTooLongError) Is(target error) bool { return target == errLineTooLong }

// lineHeadBytes is how much of an over-long line is kept to identify it.
const lineHeadBytes = 64

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
	Params lineRaw         `json:"params,omitempty"`
	Result lineRaw         `json:"result,omitempty"`
	Error  *rpcError       `json:"error,omitempty"`
}

// lineRaw is a json.RawMessage that keeps the bytes it was decoded from
// instead of copying them: params and results are most of a line, and a
// line can be megabytes (an item with a 5 MB reply, a page of history).
// Safe because json.Unmarshal hands UnmarshalJSON a piece of its input and
// readLine gives every line a buffer of its own, never reused: what is
// kept past the line's dispatch (an event's content, a call's decoded
// result) is copied out by its decoder, and the line is then garbage.
type lineRaw []byte

func (r *lineRaw) UnmarshalJSON(b []byte) error {
	*r = b
	return nil
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
	streams  map[int64]replyDecoder // calls whose reply is decoded as it is read
	closeErr error                  // set once the stream ended; every call fails with it
	done     chan struct{}

	// ctx ends with the stream; answers waiting for a person give up then.
	ctx    context.Context
	cancel context.CancelFunc

	reqs sync.WaitGroup // server-request goroutines; Add only on the reader
}

func newConn(r io.Reader, w io.Writer, maxLine int, log *slog.Logger, h connHandlers) *conn {
	if maxLine <= 0 {
		maxLine = defaultMaxLineBytes()
	}
	c := &conn{
		log:     log,
		maxLine: maxLine,
		h:       h,
		w:       w,
		pending: make(map[int64]chan rpcResult),
		streams: make(map[int64]replyDecoder),
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
	return c.callOrLate(ctx, method, params, out, nil)
}

// lateReplyWait bounds how long a reply is awaited after its call gave up.
const lateReplyWait = 10 * time.Minute

// callOrLate is call, except that when late is set and ctx ends first the
// reply is still awaited, for lateReplyWait or until the stream ends, and
// a successful one is handed to late on its own goroutine: the caller
// learns what a request it gave up on did (a thread made after a timeout).
func (c *conn) callOrLate(ctx context.Context, method string, params, out any, late func(result json.RawMessage)) error {
	return c.callStreamed(ctx, method, params, out, late, nil)
}

// replyDecoder reads a whole reply line (the JSON-RPC envelope included)
// as it arrives and returns the result to decode into the call's out.
type replyDecoder func(line io.Reader) (json.RawMessage, error)

// errReplyUndecodable: a streamed reply could not be decoded; the server
// acted on the request.
var errReplyUndecodable = errors.New("the reply could not be decoded")

// callStreamed is callOrLate; when decode is set, a successful reply line
// is given to it on the reader goroutine as it is read, instead of being
// read whole (a reply of a whole history is tens of megabytes).
func (c *conn) callStreamed(ctx context.Context, method string, params, out any, late func(result json.RawMessage), decode replyDecoder) error {
	id := c.nextID.Add(1)
	ch := make(chan rpcResult, 1)
	c.mu.Lock()
	if c.closeErr != nil {
		err := c.closeErr
		c.mu.Unlock()
		return fmt.Errorf("codex %s: %w", method, err)
	}
	c.pending[id] = ch
	if decode != nil {
		c.streams[id] = decode
	}
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
		if late == nil {
			c.forget(id)
		} else {
			go c.awaitLate(id, method, ch, late)
		}
		return fmt.Errorf("codex %s: no reply: %w", method, ctx.Err())
	}
}

// awaitLate waits for the reply to a call that gave up; the stream ending
// fails every pending call, so it never outlives the stream.
func (c *conn) awaitLate(id int64, method string, ch chan rpcResult, late func(json.RawMessage)) {
	t := time.NewTimer(lateReplyWait)
	defer t.Stop()
	select {
	case res := <-ch:
		if res.err != nil {
			c.log.Debug("codex: late error reply", "method", method, "id", id, "err", res.err)
			return
		}
		c.log.Info("codex: late reply to a request that timed out", "method", method, "id", id)
		late(res.result)
	case <-t.C:
		c.forget(id)
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
	delete(c.streams, id)
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
		if id, ok := c.streamedReply(br); ok {
			if err = c.readStreamed(br, id); err != nil {
				break
			}
			continue
		}
		var line []byte
		line, err = readLine(br, c.maxLine)
		var long *lineTooLongError
		if errors.As(err, &long) {
			if c.failOverLong(long) {
				continue
			}
			err = fmt.Errorf("app-server sent a line of at least %d bytes, over the %d-byte limit (codex.Config.MaxLineBytes); it is not a reply tuttid can fail on its own, so the connection ends rather than drop an event", long.Size, c.maxLine)
			break
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
	c.pending, c.streams = nil, nil
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
			c.h.notify(m.Method, json.RawMessage(m.Params))
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
	ch <- rpcResult{result: json.RawMessage(m.Result)}
}

// serveRequest answers a server-to-client request, always: an unanswered
// approval stalls its turn forever.
func (c *conn) serveRequest(m wireMessage) {
	var answer func(context.Context) (any, *rpcError)
	if c.h.request != nil {
		answer = c.h.request(m.ID, m.Method, json.RawMessage(m.Params))
	}
	// The goroutine keeps the id and method only, not the line under
	// m.Params: an answer may wait for a person.
	id, method := m.ID, m.Method
	c.reqs.Add(1)
	go func() {
		defer c.reqs.Done()
		var result any
		rerr := &rpcError{Code: codeMethodNotFound, Message: "method not supported by tuttid: " + method}
		if answer != nil {
			result, rerr = answer(c.ctx)
		}
		reply := outgoing{ID: id, Error: rerr}
		if rerr == nil {
			if result == nil {
				result = struct{}{}
			}
			reply.Result = result
		}
		if err := c.write(reply); err != nil {
			c.log.Warn("codex: could not answer server request", "method", method, "err", err)
		}
	}()
}

// failOverLong fails the call whose reply was too long to read, with a
// clear error, and reports whether the line was such a reply. Anything else
// (a notification or a server request) cannot be dropped without losing an
// event, so the caller ends the connection instead.
func (c *conn) failOverLong(long *lineTooLongError) bool {
	id, ok := replyID(long.Head)
	if !ok {
		return false
	}
	c.mu.Lock()
	ch, found := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	c.log.Error("codex: reply over the line limit", "id", id, "bytes", long.Size, "limit_bytes", c.maxLine)
	if found {
		ch <- rpcResult{err: fmt.Errorf("%w: the app-server's reply of %d bytes is over the %d-byte line limit (codex.Config.MaxLineBytes)", agent.ErrProviderFailed, long.Size, c.maxLine)}
	}
	return true
}

// replyID reads the id of a response from the first bytes of its line:
// Codex writes a reply as {"id":N,"result":...} or {"id":N,"error":...}.
func replyID(head []byte) (int64, bool) {
	rest, ok := bytes.CutPrefix(bytes.TrimLeft(head, " \t\r"), []byte(`{"id":`))
	if !ok {
		return 0, false
	}
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	if n == 0 || n > 18 {
		return 0, false
	}
	if !bytes.HasPrefix(rest[n:], []byte(`,"result":`)) && !bytes.HasPrefix(rest[n:], []byte(`,"error":`)) {
		return 0, false
	}
	id, err := strconv.ParseInt(string(rest[:n]), 10, 64)
	return id, err == nil
}

// readLine reads one '\n'-terminated line of at most max bytes. An
// over-long line is consumed and reported as a *lineTooLongError (which is
// errLineTooLong) so the reader can decide what to do and go on with the
// next one; at the end of the stream, the stream's error wins.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var buf []byte
	var long *lineTooLongError
	for {
		frag, err := br.ReadSlice('\n')
		n := len(frag)
		if err == nil {
			n-- // the newline itself
		}
		switch {
		case long != nil:
			long.Size += n
		case len(buf)+n > max:
			long = &lineTooLongError{Size: len(buf) + n}
			head := append(buf, frag...)
			long.Head = bytes.Clone(head[:min(len(head), lineHeadBytes)])
			buf = nil
		default:
			buf = append(buf, frag...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if long != nil {
			if err == nil {
				return nil, long
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
