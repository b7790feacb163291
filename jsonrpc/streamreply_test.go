package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// resultOf is a ReplyDecoder: the envelope decoded from the stream, its
// result returned.
func resultOf(line io.Reader) (json.RawMessage, error) {
	var env struct{ Result json.RawMessage }
	if err := json.NewDecoder(line).Decode(&env); err != nil {
		return nil, err
	}
	return env.Result, nil
}

// TestConnStreamedReply: a call with a reply decoder gets the result it
// returns, whatever the line bound, the lines after the reply are read as
// ever, a call without one on the same connection is answered as before,
// an error reply to a streamed call is an error, and a decoder's failure
// is ErrReplyUndecodable with the line still consumed to its end.
func TestConnStreamedReply(t *testing.T) {
	p := newPipePeer(t, 1024, nil)
	ctx := context.Background()
	done := make(chan error, 1)
	var resp struct{ Big string }
	// The reader idles between lines when the call is made (the case CI
	// once caught: a reader that looked for streamed calls before the
	// line came read the reply whole).
	p.send(t, `{"method":"before","params":{}}`)
	if n := <-p.note; n != "before" {
		t.Fatalf("notification: %q", n)
	}
	time.Sleep(20 * time.Millisecond)
	go func() { done <- p.c.CallStreamed(ctx, "streamed", nil, &resp, nil, resultOf) }()
	m := p.next(t)
	var id int
	json.Unmarshal(m["id"], &id)
	big := strings.Repeat("s", 600_000)
	p.send(t, fmt.Sprintf(`{"id":%d,"result":{"big":%q}}`, id, big), `{"method":"after/reply","params":{}}`)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if resp.Big != big {
		t.Fatalf("streamed result of %d bytes, want %d", len(resp.Big), len(big))
	}
	if n := <-p.note; n != "after/reply" {
		t.Fatalf("notification after the reply: %q", n)
	}
	plain := p.callAsync(ctx, "other")
	m = p.next(t)
	json.Unmarshal(m["id"], &id)
	p.send(t, fmt.Sprintf(`{"id":%d,"result":{"ok":true}}`, id))
	if r := <-plain; r.err != nil || r.out["ok"] != true {
		t.Fatalf("plain call: %+v", r)
	}
	go func() {
		done <- p.c.CallStreamed(ctx, "streamed", nil, &resp, nil, func(io.Reader) (json.RawMessage, error) {
			return nil, errors.New("must not be called for an error")
		})
	}()
	m = p.next(t)
	json.Unmarshal(m["id"], &id)
	p.send(t, fmt.Sprintf(`{"id":%d,"error":{"code":-32600,"message":"no such thing"}}`, id))
	var re *Error
	if err := <-done; !errors.As(err, &re) || re.Message != "no such thing" {
		t.Fatalf("error reply: %v", err)
	}
	go func() { done <- p.c.CallStreamed(ctx, "streamed", nil, &resp, nil, resultOf) }()
	m = p.next(t)
	json.Unmarshal(m["id"], &id)
	p.send(t, fmt.Sprintf(`{"id":%d,"result":{"list":[{"id":]}}}`, id), `{"method":"after","params":{}}`)
	if err := <-done; !errors.Is(err, ErrReplyUndecodable) {
		t.Fatalf("undecodable reply: %v", err)
	}
	if n := <-p.note; n != "after" {
		t.Fatalf("notification after an undecodable reply: %q", n)
	}
}
