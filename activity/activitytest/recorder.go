// Package activitytest is the tests' activity publisher: a Recorder that
// keeps what the services publish, optionally inspecting the world at the
// moment of each publish (what a client reading on receipt would see).
package activitytest

import (
	"context"
	"sync"

	"tuttid/activity"
)

// Recorder is a publisher (activity.Publisher) that records every
// event it is given and returns it unchanged.
type Recorder struct {
	// Inspect, when set, runs inside Publish before the event is recorded,
	// on the publisher's goroutine: a test checks there what was committed
	// when the event went out.
	Inspect func(ctx context.Context, e activity.Event)

	mu     sync.Mutex
	events []activity.Event
}

// Publish records e.
func (r *Recorder) Publish(ctx context.Context, e activity.Event) activity.Event {
	if r.Inspect != nil {
		r.Inspect(ctx, e)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
	return e
}

// Events returns what was published so far, in order.
func (r *Recorder) Events() []activity.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]activity.Event(nil), r.events...)
}

// Take returns what was published since the last Take and forgets it.
func (r *Recorder) Take() []activity.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.events
	r.events = nil
	return out
}

// Kinds returns the kinds of what was published so far, in order.
func (r *Recorder) Kinds() []activity.Kind {
	events := r.Events()
	out := make([]activity.Kind, len(events))
	for i, e := range events {
		out[i] = e.Kind
	}
	return out
}
