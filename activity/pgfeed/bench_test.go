package pgfeed

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"tuttid/activity"
	"tuttid/store/pgtest"
)

// BenchmarkCrossInstanceLatency publishes b.N events on instance A, one
// every millisecond, and times each from Publish to its arrival at a
// subscriber on A and at one on B, in the same run: B's path adds the
// NOTIFY and a read of the table. Reported: p50 and p99 of each (µs) and
// B's p99 over A's.
//
//	go test -run '^$' -bench CrossInstance -benchtime 3000x ./activity/pgfeed/
func BenchmarkCrossInstanceLatency(b *testing.B) {
	url := pgtest.URL(b)
	opts := activity.Options{Buffer: 1 << 16}
	a, other := instance(b, url, opts, 0), instance(b, url, opts, 0)
	ctx := b.Context()
	onA, _ := sub(b, ctx, a, activity.Filter{WorkspaceID: "w"})
	onB, _ := sub(b, ctx, other, activity.Filter{WorkspaceID: "w"})
	sent := make([]time.Time, b.N)
	type arrival struct {
		i  int
		at time.Time
	}
	receive := func(ch <-chan activity.Event, out chan<- []time.Duration) {
		got := make([]arrival, 0, b.N)
		for len(got) < b.N {
			e, ok := <-ch
			if !ok || e.Kind == activity.Resync {
				break
			}
			i, _ := strconv.Atoi(e.Delta)
			got = append(got, arrival{i, time.Now()})
		}
		lat := make([]time.Duration, 0, len(got))
		for _, r := range got {
			lat = append(lat, r.at.Sub(sent[r.i]))
		}
		out <- lat
	}
	latA, latB := make(chan []time.Duration, 1), make(chan []time.Duration, 1)
	b.ResetTimer()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	// The receivers read sent[i] only after event i arrived, which is
	// after Publish: the write happens before (through the database).
	go receive(onA, latA)
	go receive(onB, latB)
	for i := range b.N {
		<-tick.C
		sent[i] = time.Now()
		a.Publish(ctx, delta("w", strconv.Itoa(i)))
	}
	da, db := <-latA, <-latB
	b.StopTimer()
	if len(da) != b.N || len(db) != b.N {
		b.Fatalf("received %d on A and %d on B of %d", len(da), len(db), b.N)
	}
	pa50, pa99 := percentile(da, 50), percentile(da, 99)
	pb50, pb99 := percentile(db, 50), percentile(db, 99)
	b.ReportMetric(float64(pa50.Microseconds()), "A-p50-µs")
	b.ReportMetric(float64(pa99.Microseconds()), "A-p99-µs")
	b.ReportMetric(float64(pb50.Microseconds()), "B-p50-µs")
	b.ReportMetric(float64(pb99.Microseconds()), "B-p99-µs")
	b.ReportMetric(float64(pb99)/float64(pa99), "B/A-p99")
}

func percentile(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

// BenchmarkStateChange times a stored change and its event, from the
// change's BEGIN to the event's arrival at a subscriber on another
// instance: "publish" commits the change then Publishes (the event waits
// in memory), "outbox" stages it in the change's transaction and calls
// Committed after the commit (what the session service does on
// PostgreSQL).
//
//	go test -run '^$' -bench StateChange -benchtime 2000x ./activity/pgfeed/
func BenchmarkStateChange(b *testing.B) {
	url := pgtest.URL(b)
	a, other := named(b, url, "A", 0), named(b, url, "B", 0)
	ctx := b.Context()
	if _, err := a.db.ExecContext(ctx, `CREATE TABLE bench_state (id int PRIMARY KEY, n bigint NOT NULL); INSERT INTO bench_state VALUES (1, 0)`); err != nil {
		b.Fatal(err)
	}
	onB, _ := sub(b, ctx, other, activity.Filter{WorkspaceID: "w"})
	for _, mode := range []string{"publish", "outbox"} {
		b.Run(mode, func(b *testing.B) {
			for b.Loop() {
				tx, err := a.db.BeginTx(ctx, nil)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := tx.ExecContext(ctx, `UPDATE bench_state SET n = n + 1 WHERE id = 1`); err != nil {
					b.Fatal(err)
				}
				var keys []string
				if mode == "outbox" {
					if keys, err = a.Stage(ctx, tx, delta("w", mode)); err != nil {
						b.Fatal(err)
					}
				}
				if err := tx.Commit(); err != nil {
					b.Fatal(err)
				}
				if mode == "outbox" {
					a.Committed(ctx, keys)
				} else {
					a.Publish(ctx, delta("w", mode))
				}
				if e := <-onB; e.Delta != mode {
					b.Fatalf("got %+v", e)
				}
			}
		})
	}
}
