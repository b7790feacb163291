package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// ErrClosed: the stream ended (its end, a failed read or write, a line that
// cannot be skipped); every pending call and every later one fails with it.
var ErrClosed = errors.New("json-rpc stream closed")

// ErrReplyUndecodable: a streamed reply could not be decoded; the peer
// acted on the request.
var ErrReplyUndecodable = errors.New("the reply could not be decoded")

// Answer decides the reply to one request from the peer. It runs on its
// own goroutine and may wait (for a person) until ctx ends, which happens
// when the stream does; a nil *Error means result is sent.
type Answer func(ctx context.Context) (result any, err *Error)

// Handlers receive what the peer sends on its own initiative.
type Handlers struct {
	// Notify is called on the reader goroutine, in arrival order; it must
	// not block (it only enqueues).
	Notify func(method string, params json.RawMessage)
	// Request is called on the reader goroutine, in arrival order with the
	// notifications, for each request from the peer; it must not block.
	// The Answer it returns is run on its own goroutine. Without it (or
	// with a nil Answer) the request is answered method-not-found: an
	// unanswered request can stall the peer forever.
	Request func(id json.RawMessage, method string, params json.RawMessage) Answer
	// Sent, when set, is called once a request is written.
	Sent func(method string)
}

// Conn is a JSON-RPC client over one line-delimited stream pair that also
// answers the peer's requests. It is independent of processes so it can be
// tested over pipes. Its errors do not name the method: the caller does.
type Conn struct {
	log     *slog.Logger
	maxLine int
	h       Handlers

	wmu sync.Mutex
	w   io.Writer

	nextID atomic.Int64

	mu       sync.Mutex
	pending  map[int64]chan rpcResult
	streams  map[int64]ReplyDecoder // calls whose reply is decoded as it is read
	closeErr error                  // set once the stream ended; every call fails with it
	done     chan struct{}

	// ctx ends with the stream; answers waiting for a person give up then.
	ctx    context.Context
	cancel context.CancelFunc

	reqs sync.WaitGroup // answer goroutines; Add only on the reader
}

type rpcResult struct {
	result json.RawMessage
	err    error
}

// New starts reading r and returns the Conn that writes requests to w.
// maxLine bounds a line read whole (DefaultMaxLineBytes when <= 0).
func New(r io.Reader, w io.Writer, maxLine int, log *slog.Logger, h Handlers) *Conn {
	if maxLine <= 0 {
		maxLine = DefaultMaxLineBytes()
	}
	c := &Conn{
		log:     log,
		maxLine: maxLine,
		h:       h,
		w:       w,
		pending: make(map[int64]chan rpcResult),
		streams: make(map[int64]ReplyDecoder),
		done:    make(chan struct{}),
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	go c.readLoop(r)
	return c
}

// Done is closed when the stream ended and every pending call has failed.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err is why the stream ended (nil while it is up); it is ErrClosed.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closeErr
}

// Call sends a request and waits for its reply, for ctx, or for the stream
// to end. A reply that arrives after ctx ended is discarded by the reader.
// A reply that is an error is an *Error.
func (c *Conn) Call(ctx context.Context, method string, params, out any) error {
	return c.CallOrLate(ctx, method, params, out, nil)
}

// lateReplyWait bounds how long a reply is awaited after its call gave up.
const lateReplyWait = 10 * time.Minute

// CallOrLate is Call, except that when late is set and ctx ends first the
// reply is still awaited, for lateReplyWait or until the stream ends, and
// a successful one is handed to late on its own goroutine: the caller
// learns what a request it gave up on did (a thing made after a timeout).
func (c *Conn) CallOrLate(ctx context.Context, method string, params, out any, late func(result json.RawMessage)) error {
	return c.CallStreamed(ctx, method, params, out, late, nil)
}

// ReplyDecoder reads a whole reply line (the JSON-RPC envelope included)
// as it arrives and returns the result to decode into the call's out.
type ReplyDecoder func(line io.Reader) (json.RawMessage, error)

// CallStreamed is CallOrLate; when decode is set, a successful reply line
// is given to it on the reader goroutine as it is read, instead of being
// read whole (a reply can be tens of megabytes), and is not bounded by the
// line bound. A decoder's failure is ErrReplyUndecodable.
func (c *Conn) CallStreamed(ctx context.Context, method string, params, out any, late func(result json.RawMessage), decode ReplyDecoder) error {
	id := c.nextID.Add(1)
	ch := make(chan rpcResult, 1)
	c.mu.Lock()
	if c.closeErr != nil {
		err := c.closeErr
		c.mu.Unlock()
		return err
	}
	c.pending[id] = ch
	if decode != nil {
		c.streams[id] = decode
	}
	c.mu.Unlock()

	if err := c.write(outgoing{ID: id, Method: method, Params: params}); err != nil {
		c.forget(id)
		return err
	}
	if c.h.Sent != nil {
		c.h.Sent(method)
	}
	select {
	case res := <-ch:
		if res.err != nil {
			return res.err
		}
		if out == nil || len(res.result) == 0 {
			return nil
		}
		if err := json.Unmarshal(res.result, out); err != nil {
			return fmt.Errorf("decode result: %w", err)
		}
		return nil
	case <-ctx.Done():
		if late == nil {
			c.forget(id)
		} else {
			go c.awaitLate(id, method, ch, late)
		}
		return fmt.Errorf("no reply: %w", ctx.Err())
	}
}

// awaitLate waits for the reply to a call that gave up; the stream ending
// fails every pending call, so it never outlives the stream.
func (c *Conn) awaitLate(id int64, method string, ch chan rpcResult, late func(json.RawMessage)) {
	t := time.NewTimer(lateReplyWait)
	defer t.Stop()
	select {
	case res := <-ch:
		if res.err != nil {
			c.log.Debug("jsonrpc: late error reply", "method", method, "id", id, "err", res.err)
			return
		}
		c.log.Info("jsonrpc: late reply to a request that timed out", "method", method, "id", id)
		late(res.result)
	case <-t.C:
		c.forget(id)
	}
}

// Notify sends a notification (no reply).
func (c *Conn) Notify(method string, params any) error {
	return c.write(outgoing{Method: method, Params: params})
}

func (c *Conn) forget(id int64) {
	c.mu.Lock()
	delete(c.pending, id)
	delete(c.streams, id)
	c.mu.Unlock()
}

func (c *Conn) write(msg outgoing) error {
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
		return fmt.Errorf("%w: write: %v", ErrClosed, err)
	}
	return nil
}

// shutdown fails every pending call at once and refuses new ones.
func (c *Conn) shutdown(err error) {
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
	// Answer goroutines are not waited for here: one may be stuck writing
	// to a wedged peer, and its owner must see Done to kill it. The owner
	// waits for them with WaitRequests once the pipes close.
	close(c.done)
}

// WaitRequests waits for the goroutines answering the peer's requests; call
// it after Done, once writes can no longer block (the write side is closed).
func (c *Conn) WaitRequests() { c.reqs.Wait() }
