package jsonrpc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
)

// ErrLineTooLong marks a line over the bound. From ReadLine: the line was
// consumed and discarded (the error is a *LineTooLongError). From a call:
// its reply was such a line. From Err: a line that was not a reply ended
// the stream.
var ErrLineTooLong = errors.New("line too long")

// LineTooLongError says how long the discarded line was and keeps its
// first bytes, enough to tell whose reply it was.
type LineTooLongError struct {
	Size int
	Head []byte
}

func (e *LineTooLongError) Error() string {
	return fmt.Sprintf("line of %d bytes", e.Size)
}

func (e *LineTooLongError) Is(target error) bool { return target == ErrLineTooLong }

// lineHeadBytes is how much of an over-long line is kept to identify it.
const lineHeadBytes = 64

// ReadLine reads one '\n'-terminated line of at most max bytes, into a
// buffer of its own (never reused: LineRaw relies on it). An over-long
// line is consumed and reported as a *LineTooLongError (which is
// ErrLineTooLong) so the reader can decide what to do and go on with the
// next one; at the end of the stream, the stream's error wins. Exported for
// a peer's other streams (a child's stderr).
func ReadLine(br *bufio.Reader, max int) ([]byte, error) {
	var buf []byte
	var long *LineTooLongError
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
			long = &LineTooLongError{Size: len(buf) + n}
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
