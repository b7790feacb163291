package graph

import (
	"context"
	"errors"

	"tuttid/activity"
	"tuttid/apperr"
	"tuttid/session"
)

// subscribe checks the workspace (and session) exist, then relays the
// broker's events until the client leaves, starting with SUBSCRIBED (the
// broker's first event, once the subscription is registered: the client's
// only sign that it is live). The relay goroutine ends when the broker
// closes the channel, which it does when ctx ends.
func subscribe(ctx context.Context, b *activity.Broker, sessions *session.Service, workspaceID string, agentSessionID *string, afterSeq *int64) (<-chan *activity.Event, error) {
	if err := sessions.CheckSubscription(ctx, workspaceID, deref(agentSessionID)); err != nil {
		return nil, err
	}
	in, err := b.Subscribe(ctx, activity.Filter{WorkspaceID: workspaceID, AgentSessionID: deref(agentSessionID), AfterSeq: afterSeq})
	var resync *activity.ResyncError
	if errors.As(err, &resync) {
		why := "it is older than the events kept"
		if resync.Reason == activity.ReasonUnknownSeq {
			why = "this server never sent it (it restarted since)"
		}
		return nil, apperr.Wrap(err, apperr.ResyncRequired,
			"cannot resume after event %d: %s; reload with queries and subscribe without afterSeq", deref(afterSeq), why)
	}
	if err != nil {
		return nil, apperr.Wrap(err, apperr.Internal, "could not subscribe")
	}
	out := make(chan *activity.Event)
	go func() {
		defer close(out)
		for e := range in {
			select {
			case out <- &e:
			case <-ctx.Done():
				// Drain nothing: the broker closes in once ctx is done.
				return
			}
		}
	}()
	return out, nil
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
