package pgfeed

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx"

	"tuttid/activity"
)

const wait = 30 * time.Second // only a failing test waits this long

// openDB opens the database at url as the store does (its own pool).
func openDB(t testing.TB, url string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// instance is one tuttid's feed on the database at url.
func instance(t testing.TB, url string, opts activity.Options, keep int) *Feed {
	t.Helper()
	f, err := New(t.Context(), Config{DB: openDB(t, url), URL: url, Options: opts, Keep: keep})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f
}

// sub subscribes and checks the Subscribed event.
func sub(t testing.TB, ctx context.Context, f *Feed, flt activity.Filter) (<-chan activity.Event, int64) {
	t.Helper()
	ch, err := f.Subscribe(ctx, flt)
	if err != nil {
		t.Fatalf("Subscribe(%+v): %v", flt, err)
	}
	select {
	case e := <-ch:
		if e.Kind != activity.Subscribed {
			t.Fatalf("first event %+v, want Subscribed", e)
		}
		return ch, e.Seq
	case <-time.After(wait):
		t.Fatal("no Subscribed event")
	}
	return nil, 0
}

// collect reads n events from ch.
func collect(ch <-chan activity.Event, n int) ([]activity.Event, error) {
	out := make([]activity.Event, 0, n)
	timeout := time.After(wait)
	for len(out) < n {
		select {
		case e, ok := <-ch:
			if !ok {
				return out, fmt.Errorf("channel closed after %d of %d events", len(out), n)
			}
			if e.Kind == activity.Resync {
				return out, fmt.Errorf("resync after %d of %d events: %v", len(out), n, e.Err())
			}
			out = append(out, e)
		case <-timeout:
			return out, fmt.Errorf("timed out after %d of %d events", len(out), n)
		}
	}
	return out, nil
}

// contiguous fails unless es are numbered first, first+1, ...
func contiguous(es []activity.Event, first int64) error {
	for i, e := range es {
		if e.Seq != first+int64(i) {
			return fmt.Errorf("event %d has seq %d, want %d (gap or duplicate)", i, e.Seq, first+int64(i))
		}
	}
	return nil
}

func delta(ws, text string) activity.Event {
	return activity.Event{Kind: activity.MessageDelta, WorkspaceID: ws, AgentSessionID: "s1", ItemID: "m1", Delta: text}
}
