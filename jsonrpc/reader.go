package jsonrpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// readLoop reads lines until the stream ends, then fails what is pending.
func (c *Conn) readLoop(r io.Reader) {
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
		line, err = ReadLine(br, c.maxLine)
		var long *LineTooLongError
		if errors.As(err, &long) {
			if c.failOverLong(long) {
				continue
			}
			err = fmt.Errorf("%w: the peer sent a line of at least %d bytes, over the %d-byte limit; it is not a reply whose call can fail on its own, so the stream ends rather than drop a message", ErrLineTooLong, long.Size, c.maxLine)
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
		err = errors.New("the peer closed its output")
	}
	c.shutdown(fmt.Errorf("%w: %w", ErrClosed, err))
}

func (c *Conn) dispatch(line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	var m wireMessage
	if err := json.Unmarshal(line, &m); err != nil {
		c.log.Warn("jsonrpc: malformed line skipped", "err", err, "line", preview(line))
		return
	}
	hasID := len(m.ID) > 0 && !bytes.Equal(m.ID, []byte("null"))
	switch {
	case hasID && m.Method != "":
		c.serveRequest(m)
	case m.Method != "":
		if c.h.Notify != nil {
			c.h.Notify(m.Method, json.RawMessage(m.Params))
		}
	case hasID:
		c.deliver(m)
	default:
		c.log.Warn("jsonrpc: line is neither request, response nor notification", "line", preview(line))
	}
}

func (c *Conn) deliver(m wireMessage) {
	var id int64
	if err := json.Unmarshal(m.ID, &id); err != nil {
		c.log.Warn("jsonrpc: response with a foreign id skipped", "id", string(m.ID))
		return
	}
	c.mu.Lock()
	ch, ok := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	if !ok {
		c.log.Debug("jsonrpc: late or unknown reply discarded", "id", id)
		return
	}
	if m.Error != nil {
		ch <- rpcResult{err: m.Error}
		return
	}
	ch <- rpcResult{result: json.RawMessage(m.Result)}
}

// serveRequest answers a request from the peer, always: an unanswered
// request (an approval) can stall the peer forever.
func (c *Conn) serveRequest(m wireMessage) {
	var answer Answer
	if c.h.Request != nil {
		answer = c.h.Request(m.ID, m.Method, json.RawMessage(m.Params))
	}
	// The goroutine keeps the id and method only, not the line under
	// m.Params: an answer may wait for a person.
	id, method := m.ID, m.Method
	c.reqs.Add(1)
	go func() {
		defer c.reqs.Done()
		var result any
		rerr := &Error{Code: CodeMethodNotFound, Message: "method not supported: " + method}
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
			c.log.Warn("jsonrpc: could not answer a request", "method", method, "err", err)
		}
	}()
}

func preview(b []byte) string {
	const n = 200
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
