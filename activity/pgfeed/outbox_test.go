package pgfeed

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"tuttid/activity"
	"tuttid/store/pgtest"
)

// named is instance with an instance name and a sweep age (0: default).
func named(t testing.TB, url, name string, sweepAfter time.Duration) *Feed {
	t.Helper()
	f, err := New(t.Context(), Config{DB: openDB(t, url), URL: url, Instance: name, SweepAfter: sweepAfter,
		Options: activity.Options{Buffer: 1 << 12}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f
}

// stage stores events through a transaction of db that commits (or, with
// rollback, is rolled back) and returns their keys.
func stage(t testing.TB, f *Feed, db *sql.DB, rollback bool, events ...activity.Event) []string {
	t.Helper()
	ctx := t.Context()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The state change the events announce, in the same transaction.
	if _, err := tx.ExecContext(ctx, `CREATE TEMP TABLE IF NOT EXISTS change (n int)`); err != nil {
		t.Fatal(err)
	}
	keys, err := f.Stage(ctx, tx, events...)
	if err != nil {
		t.Fatal(err)
	}
	if rollback {
		err = tx.Rollback()
	} else {
		err = tx.Commit()
	}
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

func outboxRows(t testing.TB, db *sql.DB) int {
	t.Helper()
	var n int
	if err := db.QueryRowContext(t.Context(), `SELECT count(*) FROM activity_outbox`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func texts(es []activity.Event) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Delta
	}
	return out
}

// Staged events of a committed transaction whose process died before its
// writer moved them (before Committed, or with their markers queued and
// the writer never run) are published once, in order, when the instance
// starts again; a rolled back transaction's are never published.
func TestOutboxSurvivesAKill(t *testing.T) {
	t.Parallel()
	for _, queuedMarkers := range []bool{false, true} {
		t.Run(fmt.Sprintf("queued=%v", queuedMarkers), func(t *testing.T) {
			t.Parallel()
			url := pgtest.URL(t)
			b := named(t, url, "B", 0)
			ctx := t.Context()
			onB, first := sub(t, ctx, b, activity.Filter{WorkspaceID: "w"})

			a := named(t, url, "A", 0)
			if _, err := a.PublishWait(ctx, delta("w", "before")); err != nil {
				t.Fatal(err)
			}
			db := openDB(t, url)
			if queuedMarkers {
				// A writer that never runs: the markers stay queued.
				kill(a)
				var err error
				if a, err = open(ctx, Config{DB: db, URL: url, Instance: "A"}); err != nil {
					t.Fatal(err)
				}
			}
			keys := stage(t, a, db, false, delta("w", "staged 1"), delta("w", "staged 2"))
			stage(t, a, db, true, delta("w", "rolled back"))
			if queuedMarkers {
				a.Committed(ctx, keys)
				if len(a.queue) != 2 {
					t.Fatalf("%d markers queued, want 2", len(a.queue))
				}
				a.local.Close() // the process dies: nothing moved
			} else {
				kill(a) // dies between the commit and Committed
			}
			if n := outboxRows(t, db); n != 2 {
				t.Fatalf("%d rows in the outbox, want the 2 committed", n)
			}

			a2 := named(t, url, "A", 0)
			if n := outboxRows(t, db); n != 0 {
				t.Errorf("%d rows left in the outbox after the restart", n)
			}
			if _, err := a2.PublishWait(ctx, delta("w", "after")); err != nil {
				t.Fatal(err)
			}
			got, err := collect(onB, 4)
			if err != nil {
				t.Fatal(err)
			}
			if err := contiguous(got, first+1); err != nil {
				t.Error(err)
			}
			if want := []string{"before", "staged 1", "staged 2", "after"}; !slices.Equal(texts(got), want) {
				t.Errorf("B received %q, want %q", texts(got), want)
			}
		})
	}
}

// Committed events are published in the order of the instance's Publish
// calls around them, to the subscribers of both instances, whole (one too
// large for its notification comes through the table).
func TestOutboxInPublishOrder(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	a, b := named(t, url, "A", 0), named(t, url, "B", 0)
	ctx := t.Context()
	onA, first := sub(t, ctx, a, activity.Filter{WorkspaceID: "w"})
	onB, _ := sub(t, ctx, b, activity.Filter{WorkspaceID: "w"})
	var want []string
	for i := range 20 {
		text := strconv.Itoa(i)
		if i%3 == 1 {
			if i == 4 {
				text += strings.Repeat("x", inlineMax)
			}
			e := delta("w", text+" staged")
			e.DeltaKind = "agentMessage"
			a.Committed(ctx, stage(t, a, a.db, false, e))
			want = append(want, text+" staged")
			continue
		}
		a.Publish(ctx, delta("w", text))
		want = append(want, text)
	}
	for name, ch := range map[string]<-chan activity.Event{"A": onA, "B": onB} {
		got, err := collect(ch, len(want))
		if err != nil {
			t.Fatalf("on %s: %v", name, err)
		}
		if err := contiguous(got, first+1); err != nil {
			t.Errorf("on %s: %v", name, err)
		}
		if !slices.Equal(texts(got), want) {
			t.Errorf("on %s: %q, want %q", name, texts(got), want)
		}
		for _, e := range got {
			if e.ItemID != "m1" || e.AgentSessionID != "s1" || e.At.IsZero() {
				t.Errorf("on %s: event %d came as %+v", name, e.Seq, e)
			}
		}
	}
	if n := outboxRows(t, a.db); n != 0 {
		t.Errorf("%d rows left in the outbox", n)
	}
}

// An instance's start moves only its own rows; the rows of an instance
// that does not come back are moved by the others once older than
// SweepAfter, each once and in the order staged, though two instances
// sweep at once.
func TestOutboxOfAnInstanceThatDoesNotReturn(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	a := named(t, url, "A", 0)
	ctx := t.Context()
	const n = 600 // more than a sweep's page
	events := make([]activity.Event, n)
	for i := range events {
		events[i] = delta("w", strconv.Itoa(i))
	}
	stage(t, a, a.db, false, events...)
	kill(a)

	// A's rows become any instance's to move grace after they were
	// staged: B and C must start and subscribe within it. 300 ms was
	// too short for two starts on a loaded machine (a make test beside two
	// CPU hogs saw 88 of the 600 rows already moved at the check).
	const grace = 3 * time.Second
	b := named(t, url, "B", grace)
	c := named(t, url, "C", grace)
	if rows := outboxRows(t, b.db); rows != n {
		t.Fatalf("%d rows in the outbox after B and C started, want A's %d", rows, n)
	}
	onB, first := sub(t, ctx, b, activity.Filter{WorkspaceID: "w"})
	onC, _ := sub(t, ctx, c, activity.Filter{WorkspaceID: "w"})
	for name, ch := range map[string]<-chan activity.Event{"B": onB, "C": onC} {
		got, err := collect(ch, n)
		if err != nil {
			t.Fatalf("on %s: %v", name, err)
		}
		if err := contiguous(got, first+1); err != nil {
			t.Errorf("on %s: %v", name, err)
		}
		for i, e := range got {
			if e.Delta != strconv.Itoa(i) {
				t.Fatalf("on %s: event %d is %q, want %d (staged order)", name, i, e.Delta, i)
			}
		}
	}
	// Nothing more: a duplicate would follow.
	marker, err := b.PublishWait(ctx, delta("w", "marker"))
	if err != nil {
		t.Fatal(err)
	}
	if marker.Seq != first+n+1 {
		t.Errorf("marker numbered %d, want %d: some staged event was stored twice", marker.Seq, first+n+1)
	}
}

// Stage leaves out what Publish would refuse, and the outbox row carries
// the instance that staged it.
func TestStageRefusesReservedKinds(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	a := named(t, url, "A", 0)
	ctx := context.WithoutCancel(t.Context())
	keys := stage(t, a, a.db, false, activity.Event{Kind: activity.Resync, WorkspaceID: "w"},
		activity.Event{Kind: activity.MessageDelta}, delta("w", "ok"))
	if len(keys) != 1 {
		t.Fatalf("%d events staged, want 1", len(keys))
	}
	var instance string
	if err := a.db.QueryRowContext(ctx, `SELECT instance FROM activity_outbox WHERE id = $1`, keys[0]).Scan(&instance); err != nil || instance != "A" {
		t.Errorf("row's instance %q (%v), want A", instance, err)
	}
}
