package jsonrpc

import (
	"bytes"
	"fmt"
	"strconv"
)

// failOverLong fails the call whose reply was too long to read, with a
// clear error, and reports whether the line was such a reply. Anything else
// (a notification or a request) cannot be dropped without losing a
// message, so the caller ends the stream instead.
func (c *Conn) failOverLong(long *LineTooLongError) bool {
	id, ok := replyID(long.Head)
	if !ok {
		return false
	}
	c.mu.Lock()
	ch, found := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	c.log.Error("jsonrpc: reply over the line limit", "id", id, "bytes", long.Size, "limit_bytes", c.maxLine)
	if found {
		ch <- rpcResult{err: fmt.Errorf("%w: the peer's reply of %d bytes is over the %d-byte line limit", ErrLineTooLong, long.Size, c.maxLine)}
	}
	return true
}

// replyID reads the id of a response from the first bytes of its line. It
// knows a reply only when the peer writes the id first, as
// {"id":N,"result":...} or {"id":N,"error":...}; a reply written otherwise
// over the bound ends the stream like any other over-long line.
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
