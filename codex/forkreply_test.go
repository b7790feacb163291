package codex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"tuttid/agent"
	"tuttid/jsonrpc"
)

// forkReplyLine is a thread/fork reply with n turns whose replies are
// size bytes of escaped text.
func forkReplyLine(id, n, size int) (string, []wireTurn) {
	var turns []wireTurn
	var parts []string
	for i := 0; i < n; i++ {
		text, _ := json.Marshal(strings.Repeat(fmt.Sprintf("turn %d \"line\"\n", i), size/8+1)[:size])
		raw := fmt.Sprintf(`{"id":"t%d","items":[{"type":"userMessage","id":"u%d","content":[{"type":"text","text":"q %d"}]},{"type":"agentMessage","id":"a%d","text":%s}],"status":"completed","error":null,"startedAt":17}`, i, i, i, i, text)
		var wt wireTurn
		if err := json.Unmarshal([]byte(raw), &wt); err != nil {
			panic(err)
		}
		turns = append(turns, wt)
		parts = append(parts, raw)
	}
	line := fmt.Sprintf(`{"id":%d,"result":{"thread":{"id":"child","forkedFromId":"parent","status":{"type":"idle"},"cwd":"/w","turns":[%s],"model":null},"model":"m","modelProvider":"openai","cwd":"/w","reasoningEffort":"high"}}`,
		id, strings.Join(parts, ","))
	return line, turns
}

// TestDecodeForkReply: the reply read as a stream (whatever the sizes of
// the reads) gives each turn as projectTurn would and the rest of the
// result as encoding/json reads it.
func TestDecodeForkReply(t *testing.T) {
	for _, tc := range []struct {
		name         string
		turns, bytes int
		reader       func(io.Reader) io.Reader
	}{
		{"no turns", 0, 0, func(r io.Reader) io.Reader { return r }},
		{"large turns", 3, 1 << 20, func(r io.Reader) io.Reader { return r }},
		{"one byte a read", 4, 300, iotest.OneByteReader},
		{"half reads", 5, 70_000, iotest.HalfReader},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line, wire := forkReplyLine(7, tc.turns, tc.bytes)
			var got []agent.RuntimeTurn
			result, err := decodeForkReply(tc.reader(strings.NewReader(line)), func(t agent.RuntimeTurn) { got = append(got, t) })
			if err != nil {
				t.Fatal(err)
			}
			if want := projectTurns(wire); !reflect.DeepEqual(got, want) && len(want) > 0 {
				t.Errorf("turns differ: got %d, want %d", len(got), len(want))
			}
			var resp, want wireThreadResponse
			if err := json.Unmarshal(result, &resp); err != nil {
				t.Fatalf("result %s: %v", result, err)
			}
			var env struct{ Result wireThreadResponse }
			if err := json.Unmarshal([]byte(line), &env); err != nil {
				t.Fatal(err)
			}
			want = env.Result
			want.Thread.Turns = nil
			if !reflect.DeepEqual(resp, want) {
				t.Errorf("result = %+v, want %+v", resp, want)
			}
		})
	}
	for _, bad := range []string{`{"id":1,"result":{"thread":{"turns":[{"id":"t"},]}}}`, `{"id":1,"result":{"thread":{"turns":[{"id":"t"}`, `{"id":1}`} {
		if _, err := decodeForkReply(strings.NewReader(bad), func(agent.RuntimeTurn) {}); err == nil {
			t.Errorf("decodeForkReply(%q) succeeded", bad)
		}
	}
}

// TestForkReplyStreamedOverConn: a thread/fork call with decodeForkReply
// as its reply decoder gets every turn and the rest of the result, the
// lines after the reply are read as ever, and a reply the decoder cannot
// read is jsonrpc.ErrReplyUndecodable (the generic cases: jsonrpc's
// TestConnStreamedReply).
func TestForkReplyStreamedOverConn(t *testing.T) {
	p := newRPCPipe(t, 0)
	ctx := context.Background()
	var turns []agent.RuntimeTurn
	done := make(chan error, 1)
	var resp wireThreadResponse
	// The reader idles between lines when the call is made.
	p.send(t, `{"method":"before","params":{}}`)
	if n := <-p.note; n != "before" {
		t.Fatalf("notification: %q", n)
	}
	time.Sleep(20 * time.Millisecond)
	go func() {
		done <- p.c.CallStreamed(ctx, "thread/fork", nil, &resp, nil, func(line io.Reader) (json.RawMessage, error) {
			return decodeForkReply(line, func(t agent.RuntimeTurn) { turns = append(turns, t) })
		})
	}()
	line, _ := forkReplyLine(p.nextID(t), 3, 200_000)
	p.send(t, line, `{"method":"thread/started","params":{}}`)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(turns) != 3 || resp.Thread.ID != "child" || resp.Model != "m" {
		t.Fatalf("got %d turns, thread %q, model %q", len(turns), resp.Thread.ID, resp.Model)
	}
	if n := <-p.note; n != "thread/started" {
		t.Fatalf("notification after the reply: %q", n)
	}
	go func() {
		done <- p.c.CallStreamed(ctx, "thread/fork", nil, &resp, nil, func(line io.Reader) (json.RawMessage, error) {
			return decodeForkReply(line, func(agent.RuntimeTurn) {})
		})
	}()
	p.send(t, fmt.Sprintf(`{"id":%d,"result":{"thread":{"turns":[{"id":]}}}`, p.nextID(t)), `{"method":"after","params":{}}`)
	if err := <-done; !errors.Is(err, jsonrpc.ErrReplyUndecodable) {
		t.Fatalf("undecodable reply: %v", err)
	}
	if n := <-p.note; n != "after" {
		t.Fatalf("notification after an undecodable reply: %q", n)
	}
}
