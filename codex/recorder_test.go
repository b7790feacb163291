package codex

import (
	"context"
	"sync"
	"testing"
	"time"

	"tuttid/agent"
)

// EventRecorder drains a Runtime's events so tests can wait for one without
// sleeping. Exported for the external (integration) tests of this package.
type EventRecorder struct {
	mu      sync.Mutex
	events  []agent.Event
	changed chan struct{} // closed and replaced on every event
	closed  bool
}

// RecordEvents drains ch until it is closed.
func RecordEvents(ch <-chan agent.Event) *EventRecorder {
	rec := &EventRecorder{changed: make(chan struct{})}
	go func() {
		for e := range ch {
			rec.mu.Lock()
			rec.events = append(rec.events, e)
			close(rec.changed)
			rec.changed = make(chan struct{})
			rec.mu.Unlock()
		}
		rec.mu.Lock()
		rec.closed = true
		close(rec.changed)
		rec.changed = make(chan struct{})
		rec.mu.Unlock()
	}()
	return rec
}

// Events returns a copy of what arrived so far.
func (rec *EventRecorder) Events() []agent.Event {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]agent.Event(nil), rec.events...)
}

// Wait returns the first event (from the start) matching match, waiting up
// to timeout for it; the test fails on timeout.
func (rec *EventRecorder) Wait(t testing.TB, timeout time.Duration, what string, match func(agent.Event) bool) agent.Event {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		rec.mu.Lock()
		for _, e := range rec.events {
			if match(e) {
				rec.mu.Unlock()
				return e
			}
		}
		changed, closed := rec.changed, rec.closed
		rec.mu.Unlock()
		if closed {
			t.Fatalf("events closed while waiting for %s; got %s", what, summarize(rec.Events()))
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("no %s within %s; got %s", what, timeout, summarize(rec.Events()))
		}
	}
}

// WaitClosed waits for the events channel to be closed.
func (rec *EventRecorder) WaitClosed(t testing.TB, timeout time.Duration) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		rec.mu.Lock()
		changed, closed := rec.changed, rec.closed
		rec.mu.Unlock()
		if closed {
			return
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("events channel not closed within %s", timeout)
		}
	}
}

// TurnDone matches the completion of a turn.
func TurnDone(turnID string) func(agent.Event) bool {
	return func(e agent.Event) bool { return e.Kind == agent.EventTurnCompleted && e.TurnID == turnID }
}

func summarize(evs []agent.Event) string {
	s := ""
	for _, e := range evs {
		s += "\n  " + string(e.Kind) + " " + e.Method + " " + e.ThreadID + " " + e.TurnID + " " + e.Status
	}
	return s
}

// KillAppServer kills the running app-server as a crash would.
func KillAppServer(rt *Runtime) error {
	p, err := rt.current()
	if err != nil {
		return err
	}
	p.Kill()
	return nil
}

// AnswerApprovals answers each approval request as it arrives, with decide,
// on its own goroutine until the test ends. decide returning an empty
// Decision leaves the request pending.
func (rec *EventRecorder) AnswerApprovals(t testing.TB, rt agent.Approver, decide func(agent.ApprovalRequest) agent.ApprovalResponse) {
	stop := make(chan struct{})
	done := make(chan struct{})
	t.Cleanup(func() { close(stop); <-done })
	go func() {
		defer close(done)
		next := 0
		for {
			rec.mu.Lock()
			evs := rec.events[next:]
			next = len(rec.events)
			changed, closed := rec.changed, rec.closed
			rec.mu.Unlock()
			for _, e := range evs {
				if e.Kind != agent.EventApprovalRequested || e.Approval == nil {
					continue
				}
				resp := decide(*e.Approval)
				if resp.Decision == "" {
					continue
				}
				resp.ID, resp.Provider = e.Approval.ID, agent.ProviderCodex
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				if err := rt.RespondToApproval(ctx, resp); err != nil {
					t.Errorf("RespondToApproval(%s %s): %v", e.Approval.Method, resp.Decision, err)
				}
				cancel()
			}
			if closed {
				return
			}
			select {
			case <-changed:
			case <-stop:
				return
			}
		}
	}()
}
