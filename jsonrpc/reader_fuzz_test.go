package jsonrpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
)

// FuzzReadLine checks the line reader against a plain model: the input
// split after each newline; a line whose content (without its newline) is
// over max bytes is skipped with ErrLineTooLong (or, when it is the last
// one without a newline, ends the stream); every other line comes back
// whole. A small bufio buffer exercises lines longer than the buffer.
func FuzzReadLine(f *testing.F) {
	f.Add([]byte("{\"id\":1,\"result\":{}}\n{\"method\":\"x\"}\n"), uint8(64))
	f.Add([]byte("short\nthis line is much too long\nok\n"), uint8(8))
	f.Add([]byte("12345678"), uint8(8))
	f.Add([]byte("123456789"), uint8(8))
	f.Add([]byte("\n\n\n"), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, max uint8) {
		br := bufio.NewReaderSize(bytes.NewReader(data), 16)
		rest := data
		for {
			var want []byte
			var last bool
			if i := bytes.IndexByte(rest, '\n'); i >= 0 {
				want, rest = rest[:i+1], rest[i+1:]
			} else {
				want, rest, last = rest, nil, true
			}
			got, err := ReadLine(br, int(max))
			content := bytes.TrimSuffix(want, []byte("\n"))
			switch {
			case len(content) > int(max) && !last:
				if !errors.Is(err, ErrLineTooLong) || got != nil {
					t.Fatalf("line %q over %d bytes: got %q, %v", want, max, got, err)
				}
			case len(content) > int(max):
				if !errors.Is(err, io.EOF) || got != nil {
					t.Fatalf("last line %q over %d bytes: got %q, %v", want, max, got, err)
				}
			case !bytes.Equal(got, want):
				t.Fatalf("line %q (max %d): got %q, %v", want, max, got, err)
			case last && !errors.Is(err, io.EOF):
				t.Fatalf("last line %q: err %v, want EOF", want, err)
			case !last && err != nil:
				t.Fatalf("line %q: err %v", want, err)
			}
			if last {
				return
			}
		}
	})
}

// FuzzConnReader feeds arbitrary peer output to a Conn's reader: it never
// panics, notifies exactly the notifications of the lines within the
// limit, in order, up to the first over-long line that is not a reply (a
// message it cannot drop: the stream ends there), and ends with ErrClosed.
func FuzzConnReader(f *testing.F) {
	f.Add([]byte(`{"method":"some/started","params":{"id":"t"}}` + "\n" + `{"id":7,"method":"some/request","params":{}}` + "\n"))
	f.Add([]byte(`{"id":1,"result":{"made":{"id":"t"}}}` + "\n" + `{"id":"x","error":{"code":-1,"message":"m"}}` + "\n"))
	f.Add([]byte("not json\n{}\n[]\nnull\n{\"id\":null,\"method\":\"\"}\n"))
	f.Add([]byte(`{"method":"a"}`)) // no final newline
	f.Add([]byte(`{"id":3,"result":"` + strings.Repeat("r", 300) + "\"}\n" + `{"method":"kept"}` + "\n" +
		`{"method":"big","params":"` + strings.Repeat("p", 300) + "\"}\n" + `{"method":"lost"}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var methods []string
		h := Handlers{
			Notify: func(method string, params json.RawMessage) { methods = append(methods, method) },
			Request: func(json.RawMessage, string, json.RawMessage) Answer {
				return func(context.Context) (any, *Error) { return nil, &Error{Code: -1, Message: "no"} }
			},
		}
		c := New(bytes.NewReader(data), io.Discard, 256, slog.New(slog.DiscardHandler), h)
		<-c.Done()
		c.reqs.Wait()
		// The model: each line within the limit, decoded on its own; a
		// notification is a method without an id.
		var want []string
		for _, line := range bytes.SplitAfter(data, []byte("\n")) {
			if len(bytes.TrimSuffix(line, []byte("\n"))) > 256 {
				if _, reply := replyID(line[:lineHeadBytes]); reply {
					continue
				}
				break
			}
			var m wireMessage
			if json.Unmarshal(bytes.TrimSpace(line), &m) != nil {
				continue
			}
			if m.Method != "" && (len(m.ID) == 0 || string(m.ID) == "null") {
				want = append(want, m.Method)
			}
		}
		if !slices.Equal(methods, want) {
			t.Fatalf("notified %q, want %q", methods, want)
		}
		if !errors.Is(c.Err(), ErrClosed) {
			t.Fatalf("the stream ended with %v", c.Err())
		}
	})
}
