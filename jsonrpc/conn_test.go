package jsonrpc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// pipePeer is the other side of a Conn over in-memory pipes.
type pipePeer struct {
	c    *Conn
	in   *bufio.Reader  // what the client wrote
	out  *io.PipeWriter // what the client reads
	note chan string    // notifications the client got
}

func newPipePeer(t *testing.T, maxLine int, request func(string, json.RawMessage) (any, *Error)) *pipePeer {
	t.Helper()
	cr, sw := io.Pipe() // server -> client
	sr, cw := io.Pipe() // client -> server
	p := &pipePeer{in: bufio.NewReader(sr), out: sw, note: make(chan string, 16)}
	h := Handlers{Notify: func(m string, _ json.RawMessage) { p.note <- m }}
	if request != nil {
		h.Request = func(_ json.RawMessage, method string, params json.RawMessage) Answer {
			return func(context.Context) (any, *Error) { return request(method, params) }
		}
	}
	p.c = New(cr, cw, maxLine, testLogger(t), h)
	t.Cleanup(func() {
		sw.Close()
		sr.Close()
		<-p.c.Done()
		p.c.WaitRequests()
	})
	return p
}

// next reads the next message the client wrote.
func (p *pipePeer) next(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	line, err := p.in.ReadBytes('\n')
	if err != nil {
		t.Fatalf("read client message: %v", err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatalf("client wrote bad JSON %q: %v", line, err)
	}
	if _, ok := m["jsonrpc"]; ok {
		t.Fatalf("client wrote a jsonrpc member: %s", line)
	}
	return m
}

func (p *pipePeer) send(t *testing.T, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if _, err := io.WriteString(p.out, l+"\n"); err != nil {
			t.Fatal(err)
		}
	}
}

type callResult struct {
	out map[string]any
	err error
}

func (p *pipePeer) callAsync(ctx context.Context, method string) <-chan callResult {
	ch := make(chan callResult, 1)
	go func() {
		var out map[string]any
		err := p.c.Call(ctx, method, map[string]any{"x": 1}, &out)
		ch <- callResult{out, err}
	}()
	return ch
}

func recv[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(5 * time.Second):
		t.Fatal("timed out")
		panic("unreachable")
	}
}

func TestConnCorrelatesRepliesOutOfOrder(t *testing.T) {
	p := newPipePeer(t, 0, nil)
	a := p.callAsync(context.Background(), "a")
	idA := string(p.next(t)["id"])
	b := p.callAsync(context.Background(), "b")
	idB := string(p.next(t)["id"])
	p.send(t, `{"id":`+idB+`,"result":{"who":"b"}}`, `{"id":`+idA+`,"result":{"who":"a"}}`)
	if r := recv(t, a); r.err != nil || r.out["who"] != "a" {
		t.Fatalf("a = %+v", r)
	}
	if r := recv(t, b); r.err != nil || r.out["who"] != "b" {
		t.Fatalf("b = %+v", r)
	}
}

func TestConnSkipsMalformedAndOverlongLines(t *testing.T) {
	p := newPipePeer(t, 1024, nil)
	res := p.callAsync(context.Background(), "m")
	id := string(p.next(t)["id"])
	p.send(t,
		"not json",
		`{"truncated":`,
		"[1,2,3]",
		`{"neither":"request nor response"}`,
		`{"id":424242,"result":"`+strings.Repeat("y", 5000)+`"}`, // a reply over the bound, to no call: skipped whole
		`{"id":`+id+`,"result":{"ok":true}}`,
	)
	if r := recv(t, res); r.err != nil || r.out["ok"] != true {
		t.Fatalf("reply after junk = %+v", r)
	}
}

func TestConnLongLineWithinBound(t *testing.T) {
	p := newPipePeer(t, 0, nil)
	res := p.callAsync(context.Background(), "big")
	id := string(p.next(t)["id"])
	big := strings.Repeat("z", 3<<20) // far beyond bufio.Scanner's 64 KiB
	go io.WriteString(p.out, `{"id":`+id+`,"result":{"big":"`+big+`"}}`+"\n")
	if r := recv(t, res); r.err != nil || r.out["big"] != big {
		t.Fatalf("big reply: err=%v len=%d", r.err, len(r.out["big"].(string)))
	}
}

func TestConnCancelDiscardsLateReply(t *testing.T) {
	p := newPipePeer(t, 0, nil)
	ctx, cancel := context.WithCancel(context.Background())
	res := p.callAsync(ctx, "slow")
	id := string(p.next(t)["id"])
	cancel()
	if r := recv(t, res); !errors.Is(r.err, context.Canceled) {
		t.Fatalf("cancelled call = %v", r.err)
	}
	// The late reply is dropped; the next call still gets its own.
	res2 := p.callAsync(context.Background(), "next")
	id2 := string(p.next(t)["id"])
	p.send(t, `{"id":`+id+`,"result":{"late":true}}`, `{"id":`+id2+`,"result":{"late":false}}`)
	if r := recv(t, res2); r.err != nil || r.out["late"] != false {
		t.Fatalf("next = %+v", r)
	}
}

func TestConnErrorReplyIsRPCError(t *testing.T) {
	p := newPipePeer(t, 0, nil)
	res := p.callAsync(context.Background(), "x")
	id := string(p.next(t)["id"])
	p.send(t, `{"id":`+id+`,"error":{"code":-32600,"message":"no such thing: T"}}`)
	r := recv(t, res)
	var re *Error
	if !errors.As(r.err, &re) || re.Code != -32600 || re.Message != "no such thing: T" {
		t.Fatalf("err = %v", r.err)
	}
}

func TestConnStreamEndFailsPendingAtOnce(t *testing.T) {
	p := newPipePeer(t, 0, nil)
	a := p.callAsync(context.Background(), "a")
	b := p.callAsync(context.Background(), "b")
	p.next(t)
	p.next(t)
	p.out.Close()
	for _, ch := range []<-chan callResult{a, b} {
		if r := recv(t, ch); !errors.Is(r.err, ErrClosed) {
			t.Fatalf("pending call = %v", r.err)
		}
	}
	recv(t, p.c.Done())
	if err := p.c.Call(context.Background(), "after", nil, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("call after end = %v", err)
	}
}

func TestConnAnswersEveryServerRequest(t *testing.T) {
	p := newPipePeer(t, 0, func(method string, _ json.RawMessage) (any, *Error) {
		if method == "known" {
			return map[string]string{"decision": "accept"}, nil
		}
		return nil, &Error{Code: CodeMethodNotFound, Message: "nope"}
	})
	p.send(t, `{"id":0,"method":"known","params":{}}`)
	if m := p.next(t); string(m["id"]) != "0" || string(m["result"]) != `{"decision":"accept"}` {
		t.Fatalf("answer = %v", m)
	}
	p.send(t, `{"id":"str-1","method":"unknown","params":{}}`)
	if m := p.next(t); string(m["id"]) != `"str-1"` || !strings.Contains(string(m["error"]), "-32601") {
		t.Fatalf("answer = %v", m)
	}
	p.send(t, `{"method":"some/notification","params":{}}`)
	if got := recv(t, p.note); got != "some/notification" {
		t.Fatalf("notification = %q", got)
	}
}

func TestConnNoHandlerRejectsServerRequests(t *testing.T) {
	p := newPipePeer(t, 0, nil)
	p.send(t, `{"id":7,"method":"some/request","params":{}}`)
	if m := p.next(t); string(m["id"]) != "7" || !strings.Contains(string(m["error"]), "-32601") {
		t.Fatalf("answer = %v", m)
	}
}

func TestReadLine(t *testing.T) {
	for _, c := range []struct {
		name  string
		input string
		max   int
		want  []string // "!" marks ErrLineTooLong
	}{
		{"plain", "a\nbb\n", 10, []string{"a\n", "bb\n"}},
		{"no final newline", "a\nbb", 10, []string{"a\n", "bb"}},
		{"exactly max", "abcd\nx\n", 4, []string{"abcd\n", "x\n"}},
		{"over max", "abcde\nx\n", 4, []string{"!", "x\n"}},
		{"over buffer and max", strings.Repeat("q", 100) + "\nok\n", 50, []string{"!", "ok\n"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			br := bufio.NewReaderSize(strings.NewReader(c.input), 16)
			var got []string
			for {
				line, err := ReadLine(br, c.max)
				if errors.Is(err, ErrLineTooLong) {
					got = append(got, "!")
					continue
				}
				if len(line) > 0 {
					got = append(got, string(line))
				}
				if err != nil {
					break
				}
			}
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
}

// A reply over the line limit fails its own call at once with a clear
// error; the connection goes on.
func TestConnOverLongReplyFailsItsCall(t *testing.T) {
	p := newPipePeer(t, 1024, nil)
	res := p.callAsync(context.Background(), "big")
	id := string(p.next(t)["id"])
	go io.WriteString(p.out, `{"id":`+id+`,"result":{"big":"`+strings.Repeat("z", 4096)+`"}}`+"\n")
	r := recv(t, res)
	if !errors.Is(r.err, ErrLineTooLong) || !strings.Contains(r.err.Error(), "1024-byte line limit") {
		t.Fatalf("over-long reply: %v", r.err)
	}
	res2 := p.callAsync(context.Background(), "next")
	id2 := string(p.next(t)["id"])
	p.send(t, `{"id":`+id2+`,"result":{"ok":true}}`)
	if r := recv(t, res2); r.err != nil || r.out["ok"] != true {
		t.Fatalf("call after the over-long reply: %+v", r)
	}
}

// A notification over the line limit cannot be skipped without losing an
// message: the stream ends with a clear error and pending calls fail.
func TestConnOverLongNotificationEndsConnection(t *testing.T) {
	p := newPipePeer(t, 1024, nil)
	res := p.callAsync(context.Background(), "waiting")
	p.next(t)
	go io.WriteString(p.out, `{"method":"some/notification","params":{"text":"`+strings.Repeat("n", 4096)+`"}}`+"\n")
	r := recv(t, res)
	if !errors.Is(r.err, ErrClosed) || !strings.Contains(r.err.Error(), "1024-byte limit") {
		t.Fatalf("pending call after an over-long notification: %v", r.err)
	}
	select {
	case <-p.c.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("connection still up after an over-long notification")
	}
}

func TestReplyID(t *testing.T) {
	for _, c := range []struct {
		head string
		id   int64
		ok   bool
	}{
		{`{"id":12,"result":{"thr`, 12, true},
		{`{"id":3,"error":{"code"`, 3, true},
		{`{"id":7,"method":"some/`, 0, false},
		{`{"method":"some/notification"`, 0, false},
		{`{"id":"x","result":1}`, 0, false},
		{`{"id":`, 0, false},
	} {
		id, ok := replyID([]byte(c.head))
		if id != c.id || ok != c.ok {
			t.Errorf("replyID(%q) = %d, %v; want %d, %v", c.head, id, ok, c.id, c.ok)
		}
	}
}

// A call that gives up with a late handler still gets its reply: the
// handler sees it, where a plain call discards it (issue 22, point 3).
func TestConnLateReplyReachesHandler(t *testing.T) {
	p := newPipePeer(t, 0, nil)
	got := make(chan string, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		errc <- p.c.CallOrLate(ctx, "make", map[string]any{}, nil, func(r json.RawMessage) { got <- string(r) })
	}()
	id := string(p.next(t)["id"])
	if err := recv(t, errc); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("call = %v, want a deadline", err)
	}
	p.send(t, `{"id":`+id+`,"result":{"made":{"id":"late"}}}`)
	if r := recv(t, got); r != `{"made":{"id":"late"}}` {
		t.Fatalf("late handler got %s", r)
	}
}

// testLogger sends logs to the test log, visible with -v or on failure.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	defer func() { _ = recover() }() // a log line after the test ended
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
