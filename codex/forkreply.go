package codex

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"tuttid/agent"
)

// A thread/fork reply with turns is the child's whole history in one JSON
// line (80 MB for 16 replies of 5 MB). decodeForkReply reads it as it
// arrives, one turn at a time: each turn is projected and handed to a sink
// (which spools it) before the next is read, so memory holds about one
// turn, never the line. What is left (the reply without its turns) comes
// back as JSON for the call's ordinary decoding.

// streamReader reads JSON values from r into a window that holds the value
// being read and what follows it, never what was consumed.
type streamReader struct {
	r   io.Reader
	buf []byte
	pos int
	eof bool
	err error // the reader's failure, other than io.EOF
}

const streamChunk = 256 << 10

// fill reads more, at least doubling what is unconsumed when grow is set.
func (s *streamReader) fill(grow bool) bool {
	if s.eof {
		return false
	}
	if s.pos > 0 {
		n := copy(s.buf, s.buf[s.pos:])
		s.buf, s.pos = s.buf[:n], 0
	}
	want := streamChunk
	if grow {
		want = max(want, len(s.buf))
	}
	if cap(s.buf)-len(s.buf) < want {
		nb := make([]byte, len(s.buf), len(s.buf)+want)
		copy(nb, s.buf)
		s.buf = nb
	}
	read := false
	for target := len(s.buf) + want; len(s.buf) < target; {
		n, err := s.r.Read(s.buf[len(s.buf):target])
		s.buf = s.buf[:len(s.buf)+n]
		read = read || n > 0
		if err == io.EOF {
			s.eof = true
			break
		}
		if err != nil {
			s.eof, s.err = true, err
			break
		}
		if n > 0 && !grow {
			break
		}
	}
	return read
}

// skipSpace moves past spaces, reading as needed.
func (s *streamReader) skipSpace() {
	for {
		s.pos = skipSpace(s.buf, s.pos)
		if s.pos < len(s.buf) || !s.fill(false) {
			return
		}
	}
}

// peek is the next non-space byte (0 at the end).
func (s *streamReader) peek() byte {
	s.skipSpace()
	if s.pos >= len(s.buf) {
		return 0
	}
	return s.buf[s.pos]
}

// expect consumes byte c, the next non-space one.
func (s *streamReader) expect(c byte) error {
	if s.peek() != c {
		return s.syntax(fmt.Sprintf("want %q", c))
	}
	s.pos++
	return nil
}

// value returns the next whole value; the bytes are the window's, valid
// until the next read.
func (s *streamReader) value() ([]byte, error) {
	s.skipSpace()
	for {
		end, err := scanValue(s.buf, s.pos)
		if err == errShort && s.eof {
			end, err = scanWhole(s.buf, s.pos)
		}
		switch {
		case err == nil:
			v := s.buf[s.pos:end]
			s.pos = end
			return v, nil
		case err != errShort:
			return nil, s.syntax(err.Error())
		}
		if !s.fill(true) {
			return nil, s.syntax("the line ended inside a value")
		}
	}
}

// key reads an object's key and its colon.
func (s *streamReader) key() (string, error) {
	raw, err := s.value()
	if err != nil {
		return "", err
	}
	k, ok := unquote(raw)
	if !ok || raw[0] != '"' {
		return "", s.syntax("want a key")
	}
	return k, s.expect(':')
}

// next reports whether the object or array goes on (consuming its comma)
// or ends (consuming its closing byte).
func (s *streamReader) next(closing byte) (bool, error) {
	switch s.peek() {
	case ',':
		s.pos++
		return true, nil
	case closing:
		s.pos++
		return false, nil
	}
	return false, s.syntax(fmt.Sprintf("want ',' or %q", closing))
}

// members calls f for each member of the object that comes next; f reads
// the member's value.
func (s *streamReader) members(f func(key string) error) error {
	if err := s.expect('{'); err != nil {
		return err
	}
	if s.peek() == '}' {
		s.pos++
		return nil
	}
	for {
		k, err := s.key()
		if err != nil {
			return err
		}
		if err := f(k); err != nil {
			return err
		}
		more, err := s.next('}')
		if err != nil || !more {
			return err
		}
	}
}

func (s *streamReader) syntax(what string) error {
	if s.err != nil {
		return fmt.Errorf("read the reply: %w", s.err)
	}
	return fmt.Errorf("decode the reply: %s at byte %d of its window", what, s.pos)
}

// rawObject collects members kept as they were, to rebuild an object.
type rawObject struct{ b bytes.Buffer }

func (o *rawObject) add(key string, value []byte) {
	if o.b.Len() == 0 {
		o.b.WriteByte('{')
	} else {
		o.b.WriteByte(',')
	}
	k, _ := json.Marshal(key)
	o.b.Write(k)
	o.b.WriteByte(':')
	o.b.Write(value)
}

func (o *rawObject) bytes() []byte {
	if o.b.Len() == 0 {
		return []byte("{}")
	}
	return append(o.b.Bytes(), '}')
}

// decodeForkReply reads a whole reply line ({"id":N,"result":{...}})
// whose result is a thread response, giving each of result.thread.turns to
// sink as it is decoded, and returns the result without its turns.
func decodeForkReply(line io.Reader, sink func(agent.RuntimeTurn)) (json.RawMessage, error) {
	s := &streamReader{r: line}
	var result json.RawMessage
	err := s.members(func(key string) error {
		if key != "result" {
			_, err := s.value()
			return err
		}
		var top rawObject
		err := s.members(func(key string) error {
			if key != "thread" {
				v, err := s.value()
				top.add(key, v)
				return err
			}
			thread, err := decodeThread(s, sink)
			top.add(key, thread)
			return err
		})
		result = top.bytes()
		return err
	})
	if err != nil {
		return nil, err
	}
	if result == nil {
		return nil, fmt.Errorf("decode the reply: no result")
	}
	return result, nil
}

// decodeThread reads the thread object, its turns one at a time.
func decodeThread(s *streamReader, sink func(agent.RuntimeTurn)) ([]byte, error) {
	var thread rawObject
	err := s.members(func(key string) error {
		if key != "turns" || s.peek() != '[' {
			v, err := s.value()
			thread.add(key, v)
			return err
		}
		s.pos++
		if s.peek() == ']' {
			s.pos++
			return nil
		}
		for {
			raw, err := s.value()
			if err != nil {
				return err
			}
			t, err := decodeTurn(raw)
			if err != nil {
				return err
			}
			sink(t)
			more, err := s.next(']')
			if err != nil || !more {
				return err
			}
		}
	})
	return thread.bytes(), err
}

// decodeTurn projects one Turn (a whole, valid value) as projectTurn
// would after json.Unmarshal into a wireTurn; anything unusual (a field of
// another type, a key that differs only in case) goes through
// encoding/json itself.
func decodeTurn(raw []byte) (agent.RuntimeTurn, error) {
	var t wireTurn
	var errRaw []byte
	fast := objectMembers(raw, func(key, value []byte) error {
		k, ok := unquote(key)
		if !ok {
			return errSyntax
		}
		var good bool
		switch k {
		case "id":
			t.ID, good = unquote(value)
		case "status":
			t.Status, good = unquote(value)
		case "error":
			errRaw, good = value, true
		case "items":
			t.Items = t.Items[:0]
			good = value[0] == 'n' || arrayElements(value, func(it []byte) error {
				t.Items = append(t.Items, it)
				return nil
			}) == nil
		default:
			good = !strings.EqualFold(k, "id") && !strings.EqualFold(k, "status") &&
				!strings.EqualFold(k, "error") && !strings.EqualFold(k, "items")
		}
		if !good {
			return errSyntax
		}
		return nil
	})
	if fast == nil && len(errRaw) > 0 {
		fast = json.Unmarshal(errRaw, &t.Error)
	}
	if fast != nil {
		t = wireTurn{}
		if err := json.Unmarshal(raw, &t); err != nil {
			return agent.RuntimeTurn{}, fmt.Errorf("decode a turn: %w", err)
		}
	}
	return projectTurn(t), nil
}
