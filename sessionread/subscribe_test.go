package sessionread_test

import (
	"context"
	"testing"
	"time"

	"tuttid/activity"
	"tuttid/apperr"
	"tuttid/sessionread"
	"tuttid/store/storetest"
)

func TestSubscribe(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	b := activity.New(activity.Options{})
	t.Cleanup(b.Close)
	e := &testEnv{st: st, svc: sessionread.New(sessionread.Config{Store: st.Store, Subscriber: b})}
	e.st.Workspace(storetest.Workspace{ID: "ws"})
	e.st.Workspace(storetest.Workspace{ID: "other"})
	e.st.Session(storetest.Session{ID: "s1", Workspace: "ws"})
	e.st.Session(storetest.Session{ID: "s2", Workspace: "ws"})

	t.Run("rejects", func(t *testing.T) {
		seq := int64(99)
		cases := []struct {
			ws, session string
			after       *int64
			want        apperr.Code
		}{
			{"nope", "", nil, apperr.WorkspaceNotFound},
			{"ws", "nope", nil, apperr.SessionNotFound},
			{"other", "s1", nil, apperr.SessionNotFound},
			{"ws", "", &seq, apperr.ResyncRequired},
		}
		for _, c := range cases {
			ch, err := e.svc.Subscribe(context.Background(), c.ws, c.session, c.after)
			if ch != nil || apperr.CodeOf(err) != c.want {
				t.Errorf("Subscribe(%s, %s, %v) = %v, %v; want %s", c.ws, c.session, c.after, ch, err, c.want)
			}
		}
	})

	t.Run("relays a session's events until the context ends", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		ch, err := e.svc.Subscribe(ctx, "ws", "s1", nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := next(t, ch); got.Kind != activity.Subscribed {
			t.Fatalf("first event %+v, want SUBSCRIBED", got)
		}
		b.Publish(ctx, activity.Event{Kind: activity.SessionUpdated, WorkspaceID: "ws", AgentSessionID: "s2"})
		b.Publish(ctx, activity.Event{Kind: activity.MessageDelta, WorkspaceID: "ws", AgentSessionID: "s1", Delta: "hi", ItemID: "m1"})
		if got := next(t, ch); got.Kind != activity.MessageDelta || got.AgentSessionID != "s1" || got.Delta != "hi" || got.Seq == 0 {
			t.Errorf("got %+v", got)
		}
		cancel()
		select {
		case _, open := <-ch:
			if open {
				t.Error("an event after the context ended")
			}
		case <-time.After(5 * time.Second):
			t.Fatal("channel not closed after the context ended")
		}
	})

	t.Run("resumes after a seq", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		first := b.Publish(ctx, activity.Event{Kind: activity.SessionUpdated, WorkspaceID: "other", AgentSessionID: "x"})
		b.Publish(ctx, activity.Event{Kind: activity.SessionDeleted, WorkspaceID: "other", AgentSessionID: "x"})
		ch, err := e.svc.Subscribe(ctx, "other", "", &first.Seq)
		if err != nil {
			t.Fatal(err)
		}
		if got := next(t, ch); got.Kind != activity.Subscribed || got.Seq != first.Seq {
			t.Errorf("first event %+v, want SUBSCRIBED at %d", got, first.Seq)
		}
		if got := next(t, ch); got.Kind != activity.SessionDeleted || got.Seq != first.Seq+1 {
			t.Errorf("replayed %+v", got)
		}
	})
}

func next(t *testing.T, ch <-chan *activity.Event) *activity.Event {
	t.Helper()
	select {
	case e, ok := <-ch:
		if !ok {
			t.Fatal("subscription ended")
		}
		return e
	case <-time.After(5 * time.Second):
		t.Fatal("no event")
	}
	return nil
}
