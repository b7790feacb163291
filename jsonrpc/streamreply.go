package jsonrpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// streamedReply says whether the next line is the successful reply to a
// call made with a ReplyDecoder (CallStreamed), reading no further than
// its first bytes.
func (c *Conn) streamedReply(br *bufio.Reader) (int64, bool) {
	// The line's head is waited for before the streamed calls are looked
	// at: a call registers before its request is written, so a reply can
	// never arrive ahead of its registration, but a check made while the
	// reader idles between lines could.
	head := peekHead(br)
	c.mu.Lock()
	n := len(c.streams)
	c.mu.Unlock()
	if n == 0 {
		return 0, false
	}
	id, ok := resultReplyID(head)
	if !ok {
		return 0, false
	}
	c.mu.Lock()
	_, ok = c.streams[id]
	c.mu.Unlock()
	return id, ok
}

// peekHead returns the next line's first bytes (up to lineHeadBytes, or
// the whole line when shorter) without consuming them; it waits only for
// bytes of a line that has not ended.
func peekHead(br *bufio.Reader) []byte {
	b, err := br.Peek(1)
	for err == nil {
		b, _ = br.Peek(br.Buffered())
		if len(b) >= lineHeadBytes || bytes.IndexByte(b, '\n') >= 0 {
			break
		}
		_, err = br.Peek(len(b) + 1)
	}
	return b
}

// resultReplyID is replyID for a successful reply only.
func resultReplyID(head []byte) (int64, bool) {
	id, ok := replyID(head)
	if !ok || !bytes.Contains(head, []byte(`,"result":`)) {
		return 0, false
	}
	return id, true
}

// readStreamed gives the reply line to its call's decoder and delivers
// what it returns; the line is consumed to its end either way. It fails
// only when the stream itself does.
func (c *Conn) readStreamed(br *bufio.Reader, id int64) error {
	c.mu.Lock()
	decode := c.streams[id]
	delete(c.streams, id)
	ch, ok := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	if decode == nil {
		// The call gave up since streamedReply looked: the line is read
		// and dropped below.
		decode = func(io.Reader) (json.RawMessage, error) { return nil, nil }
		ok = false
	}
	lr := &lineReader{br: br}
	result, err := decode(lr)
	if _, cerr := io.Copy(io.Discard, lr); cerr != nil && lr.err == nil {
		lr.err = cerr
	}
	if lr.err != nil {
		// The stream broke mid-line: the shutdown that follows fails the
		// call (it is still pending).
		if ok {
			c.mu.Lock()
			if c.pending != nil {
				c.pending[id] = ch
			}
			c.mu.Unlock()
		}
		return lr.err
	}
	if !ok {
		c.log.Debug("jsonrpc: late or unknown streamed reply discarded", "id", id)
		return nil
	}
	if err != nil {
		ch <- rpcResult{err: fmt.Errorf("%w: %w", ErrReplyUndecodable, err)}
		return nil
	}
	ch <- rpcResult{result: result}
	return nil
}

// lineReader reads the rest of the current line from br, without its
// newline, then io.EOF.
type lineReader struct {
	br   *bufio.Reader
	done bool
	err  error // the stream's failure (io.EOF: it ended mid-line)
}

func (l *lineReader) Read(p []byte) (int, error) {
	if l.done {
		return 0, io.EOF
	}
	if l.err != nil {
		return 0, l.err
	}
	if l.br.Buffered() == 0 {
		if _, err := l.br.Peek(1); err != nil {
			l.err = err
			return 0, err
		}
	}
	b, _ := l.br.Peek(min(l.br.Buffered(), len(p)))
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		n := copy(p, b[:i])
		l.br.Discard(i + 1)
		l.done = true
		return n, nil
	}
	n := copy(p, b)
	l.br.Discard(n)
	return n, nil
}
