package codex

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"tuttid/agent"
	"tuttid/jsonrpc"
)

func TestMapError(t *testing.T) {
	for _, c := range []struct {
		code int
		msg  string
		want error // nil: only ErrProviderFailed
	}{
		{-32600, "turn not found: 019a", agent.ErrTurnNotFound},
		{-32600, "lastTurnId '019a' identifies an in-progress turn", agent.ErrTurnInProgress},
		{-32600, "no rollout found for thread id 019a", agent.ErrThreadNotFound},
		{-32600, "thread not found: 019a", agent.ErrThreadNotFound},
		{-32600, "thread not loaded: 019a", agent.ErrThreadNotFound},
		{-32600, "invalid session id: invalid character", agent.ErrThreadNotFound},
		{-32600, "no active turn to interrupt", agent.ErrTurnNotFound},
		{-32600, "thread 019a is not materialized yet; thread/turns/list is unavailable before first user message", errNotMaterialized},
		{-32600, "Invalid request: unknown variant `thread/turns/list`, expected one of `initialize`", errMethodUnsupported},
		{-32601, "Method not found", errMethodUnsupported},
		{-32603, "internal error", nil},
		{-32600, "failed to load configuration: unknown variant `bogus`, expected one of `disabled`", nil},
	} {
		err := mapError("m", fmt.Errorf("codex m: %w", &jsonrpc.Error{Code: c.code, Message: c.msg}))
		var pe *agent.ProviderError
		if !errors.As(err, &pe) || pe.Method != "m" || pe.Code != c.code || pe.Message != c.msg || !errors.Is(err, agent.ErrProviderFailed) {
			t.Errorf("%q: %v", c.msg, err)
			continue
		}
		if c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("%q: %v is not %v", c.msg, err, c.want)
		}
		if c.want == nil && pe.Kind != nil && c.code != -32600 {
			t.Errorf("%q: unexpected kind %v", c.msg, pe.Kind)
		}
	}
	// Transport errors pass through untouched.
	for _, e := range []error{context.DeadlineExceeded, agent.ErrRuntimeUnavailable} {
		if got := mapError("m", e); got != e {
			t.Errorf("mapError(%v) = %v", e, got)
		}
	}
}

// The stream's end fails every pending call at once, and every later one,
// with the runtime unavailable (the supervisor restarts Codex).
func TestCallErrorStreamEndIsRuntimeUnavailable(t *testing.T) {
	p := newRPCPipe(t, 0)
	a := p.callAsync(context.Background(), "a")
	b := p.callAsync(context.Background(), "b")
	p.nextID(t)
	p.nextID(t)
	p.out.Close()
	for _, ch := range []<-chan callResult{a, b} {
		if r := recv(t, ch); !errors.Is(r.err, agent.ErrRuntimeUnavailable) {
			t.Fatalf("pending call = %v", r.err)
		}
	}
	recv(t, p.c.Done())
	if r := recv(t, p.callAsync(context.Background(), "after")); !errors.Is(r.err, agent.ErrRuntimeUnavailable) || !strings.HasPrefix(r.err.Error(), "codex after: ") {
		t.Fatalf("call after end = %v", r.err)
	}
}

// A reply over the line limit fails its own call with the provider failed
// and names the setting to raise; the connection goes on.
func TestCallErrorOverLongReplyIsProviderFailed(t *testing.T) {
	p := newRPCPipe(t, 1024)
	res := p.callAsync(context.Background(), "big")
	id := p.nextID(t)
	go io.WriteString(p.out, fmt.Sprintf(`{"id":%d,"result":{"big":"%s"}}`, id, strings.Repeat("z", 4096))+"\n")
	r := recv(t, res)
	if !errors.Is(r.err, agent.ErrProviderFailed) || errors.Is(r.err, agent.ErrRuntimeUnavailable) ||
		!strings.Contains(r.err.Error(), "1024-byte line limit") || !strings.Contains(r.err.Error(), "codex.Config.MaxLineBytes") {
		t.Fatalf("over-long reply: %v", r.err)
	}
	res2 := p.callAsync(context.Background(), "next")
	id = p.nextID(t)
	p.send(t, fmt.Sprintf(`{"id":%d,"result":{"ok":true}}`, id))
	if r := recv(t, res2); r.err != nil || r.out["ok"] != true {
		t.Fatalf("call after the over-long reply: %+v", r)
	}
}

// A notification over the line limit cannot be skipped without losing an
// event: the connection ends and pending calls fail with the runtime
// unavailable, naming the limit and the setting.
func TestCallErrorOverLongNotificationIsRuntimeUnavailable(t *testing.T) {
	p := newRPCPipe(t, 1024)
	res := p.callAsync(context.Background(), "waiting")
	p.nextID(t)
	go io.WriteString(p.out, `{"method":"item/completed","params":{"text":"`+strings.Repeat("n", 4096)+`"}}`+"\n")
	r := recv(t, res)
	if !errors.Is(r.err, agent.ErrRuntimeUnavailable) || !strings.Contains(r.err.Error(), "1024-byte limit") || !strings.Contains(r.err.Error(), "codex.Config.MaxLineBytes") {
		t.Fatalf("pending call after an over-long notification: %v", r.err)
	}
	recv(t, p.c.Done())
}

// An error reply passes callError untouched, for mapError.
func TestCallErrorKeepsErrorReplies(t *testing.T) {
	p := newRPCPipe(t, 0)
	res := p.callAsync(context.Background(), "thread/read")
	id := p.nextID(t)
	p.send(t, fmt.Sprintf(`{"id":%d,"error":{"code":-32600,"message":"thread not found: T"}}`, id))
	r := recv(t, res)
	if err := mapError("thread/read", r.err); !errors.Is(err, agent.ErrThreadNotFound) || errors.Is(err, agent.ErrRuntimeUnavailable) {
		t.Fatalf("error reply: %v", err)
	}
}
