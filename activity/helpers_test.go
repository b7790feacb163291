package activity

import (
	"context"
	"fmt"
	"testing"
	"time"
)

const wait = 10 * time.Second // generous: only a failing test waits this long

// subscribe subscribes and consumes the Subscribed event every
// subscription starts with (checked by checkSubscribed); the channel
// returned holds what follows it.
func subscribe(t testing.TB, ctx context.Context, b *Broker, f Filter) <-chan Event {
	t.Helper()
	ch, err := b.Subscribe(ctx, f)
	if err != nil {
		t.Fatalf("Subscribe(%+v): %v", f, err)
	}
	first := recv(t, ch, 1)[0]
	if err := checkSubscribed(first, f); err != nil {
		t.Fatal(err)
	}
	return ch
}

// checkSubscribed reports whether e is the Subscribed event a subscription
// with f starts with; with f.AfterSeq its seq is AfterSeq (the latest seq
// is for the caller to check). It does not fail the test, so that
// goroutines may call it.
func checkSubscribed(e Event, f Filter) error {
	if e.Kind != Subscribed || e.WorkspaceID != f.WorkspaceID || e.AgentSessionID != f.AgentSessionID || e.Err() != nil || e.At.IsZero() {
		return fmt.Errorf("first event %+v, want Subscribed for %+v", e, f)
	}
	if f.AfterSeq != nil && e.Seq != *f.AfterSeq {
		return fmt.Errorf("Subscribed seq %d, want AfterSeq %d", e.Seq, *f.AfterSeq)
	}
	return nil
}

// recv reads n events or fails.
func recv(t testing.TB, ch <-chan Event, n int) []Event {
	t.Helper()
	out := make([]Event, 0, n)
	timeout := time.After(wait)
	for len(out) < n {
		select {
		case e, ok := <-ch:
			if !ok {
				t.Fatalf("channel closed after %d of %d events", len(out), n)
			}
			out = append(out, e)
		case <-timeout:
			t.Fatalf("timed out after %d of %d events", len(out), n)
		}
	}
	return out
}

// drain reads until the channel is closed or fails.
func drain(t testing.TB, ch <-chan Event) []Event {
	t.Helper()
	var out []Event
	timeout := time.After(wait)
	for {
		select {
		case e, ok := <-ch:
			if !ok {
				return out
			}
			out = append(out, e)
		case <-timeout:
			t.Fatalf("channel not closed after %d events", len(out))
		}
	}
}

func seqs(es []Event) []int64 {
	out := make([]int64, len(es))
	for i, e := range es {
		out[i] = e.Seq
	}
	return out
}

func span(from, to int64) []int64 {
	var out []int64
	for s := from; s <= to; s++ {
		out = append(out, s)
	}
	return out
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
