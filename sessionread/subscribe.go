package sessionread

import (
	"context"
	"errors"

	"tuttid/activity"
	"tuttid/apperr"
)

// Subscriber hands out the activity of a workspace (activity.Broker is one).
type Subscriber interface {
	Subscribe(ctx context.Context, f activity.Filter) (<-chan activity.Event, error)
}

// Subscribe checks that the workspace (and the session, when one is named)
// exist, then relays their activity until ctx ends, starting with
// SUBSCRIBED (the broker's first event, once the subscription is
// registered: the client's only sign that it is live), then the events
// after afterSeq when it is given, then live ones. The channel is closed
// when the subscription ends (ctx done, or the subscriber dropped after a
// Resync event).
func (s *Reader) Subscribe(ctx context.Context, workspaceID, sessionID string, afterSeq *int64) (<-chan *activity.Event, error) {
	if err := s.CheckSubscription(ctx, workspaceID, sessionID); err != nil {
		return nil, err
	}
	if s.sub == nil {
		return nil, apperr.New(apperr.Internal, "no activity to subscribe to")
	}
	in, err := s.sub.Subscribe(ctx, activity.Filter{WorkspaceID: workspaceID, AgentSessionID: sessionID, AfterSeq: afterSeq})
	var resync *activity.ResyncError
	if errors.As(err, &resync) {
		why := "it is older than the events kept"
		if resync.Reason == activity.ReasonUnknownSeq {
			why = "this server never sent it (it restarted since)"
		}
		return nil, apperr.Wrap(err, apperr.ResyncRequired,
			"cannot resume after event %d: %s; reload with queries and subscribe without afterSeq", *afterSeq, why)
	}
	if err != nil {
		return nil, apperr.Wrap(err, apperr.Internal, "could not subscribe")
	}
	// The transports want each event by pointer (one per subscriber, since
	// events are shared and immutable). The goroutine ends when the broker
	// closes in, which it does once ctx is done.
	out := make(chan *activity.Event)
	go func() {
		defer close(out)
		for e := range in {
			select {
			case out <- &e:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}
