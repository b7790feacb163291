package activitytest_test

import (
	"context"
	"slices"
	"testing"

	"tuttid/activity"
	"tuttid/activity/activitytest"
)

func TestRecorder(t *testing.T) {
	t.Parallel()
	var inspected []activity.Kind
	r := &activitytest.Recorder{Inspect: func(_ context.Context, e activity.Event) { inspected = append(inspected, e.Kind) }}
	ctx := context.Background()
	if e := r.Publish(ctx, activity.Event{Kind: activity.SessionCreated, AgentSessionID: "s"}); e.AgentSessionID != "s" {
		t.Errorf("Publish changed the event: %+v", e)
	}
	r.Publish(ctx, activity.Event{Kind: activity.TurnStarted})
	want := []activity.Kind{activity.SessionCreated, activity.TurnStarted}
	if !slices.Equal(r.Kinds(), want) || !slices.Equal(inspected, want) {
		t.Errorf("kinds %v, inspected %v; want %v", r.Kinds(), inspected, want)
	}
	if got := r.Take(); len(got) != 2 || len(r.Events()) != 0 {
		t.Errorf("Take %v, then %v", got, r.Events())
	}
}
