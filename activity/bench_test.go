package activity

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tuttid/ent"
)

// benchEvent is a typical MESSAGE_DELTA, the most frequent kind.
func benchEvent() Event {
	return Event{
		Kind: MessageDelta, WorkspaceID: "ws-1", AgentSessionID: "sess-1",
		Message: &ent.Message{}, ItemID: "item-1", Delta: "some streamed tokens",
	}
}

// BenchmarkBaselineChan is the floor BenchmarkFanout is compared with: the
// same Event through one buffered channel (as large as the broker's) to one
// reader, no broker.
func BenchmarkBaselineChan(b *testing.B) {
	ch := make(chan Event, benchBuffer)
	done := make(chan struct{})
	lat := latencies{stride: max(1, b.N/1000)}
	go func() {
		defer close(done)
		for e := range ch {
			lat.add(e)
		}
	}()
	e := benchEvent()
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		e.Seq, e.At = int64(i+1), time.Now()
		ch <- e
	}
	close(ch)
	<-done
	elapsed := time.Since(start)
	b.StopTimer()
	reportRate(b, elapsed, 1)
	lat.report(b)
}

const (
	benchBuffer = 1024
	// The publisher waits, every benchBatch events, until all subscribers
	// got the event benchBatch before: they never lag more than
	// 2*benchBatch < benchBuffer, so the figures are sustained throughput
	// without drops (like the baseline, whose sender blocks on a full
	// channel).
	benchBatch = benchBuffer / 4
)

// BenchmarkFanout publishes b.N events to S subscribers and stops the clock
// when every subscriber has received all of them: ns/event is the cost of
// one published event delivered to all S; p50/p99 are publish→receive
// latencies under that sustained load (so they include queueing).
func BenchmarkFanout(b *testing.B) {
	for _, subs := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("subs=%d", subs), func(b *testing.B) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			br := New(Options{Buffer: benchBuffer, Logger: discardLogger()})
			defer br.Close()

			gates := make([]gate, b.N/benchBatch+1) // gates[k]: all got seq k*benchBatch
			for i := range gates {
				gates[i] = gate{done: make(chan struct{})}
				gates[i].left.Store(int64(subs))
			}
			n := int64(b.N)
			var wg sync.WaitGroup
			var drops atomic.Int64
			lats := make([]latencies, subs)
			for i := range lats {
				lats[i].stride = max(1, b.N/1000) // bounded sample per subscriber
				ch := subscribe(b, ctx, br, Filter{WorkspaceID: "ws-1"})
				wg.Go(func() {
					var seen int64
					defer func() { // a dropped reader must not hold the publisher
						for k := seen/benchBatch + 1; k < int64(len(gates)); k++ {
							gates[k].pass()
						}
					}()
					for e := range ch {
						if e.Kind == Resync {
							drops.Add(1)
							return
						}
						seen = e.Seq
						lats[i].add(e)
						if seen%benchBatch == 0 {
							gates[seen/benchBatch].pass()
						}
						if seen == n {
							return
						}
					}
				})
			}
			e := benchEvent()
			b.ResetTimer()
			start := time.Now()
			for i := 1; i <= b.N; i++ {
				br.Publish(ctx, e)
				if i%benchBatch == 0 && i > benchBatch {
					<-gates[i/benchBatch-1].done
				}
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()

			reportRate(b, elapsed, subs)
			var all latencies
			for _, l := range lats {
				all.d = append(all.d, l.d...)
			}
			all.report(b)
			if d := drops.Load(); d != 0 {
				b.Errorf("%d subscribers dropped", d)
			}
		})
	}
}

// gate is closed once every subscriber passed it.
type gate struct {
	left atomic.Int64
	done chan struct{}
}

func (g *gate) pass() {
	if g.left.Add(-1) == 0 {
		close(g.done)
	}
}

// BenchmarkPublishReceive measures unloaded latency: one event at a time,
// the next published once all S subscribers received the previous one.
func BenchmarkPublishReceive(b *testing.B) {
	for _, subs := range []int{1, 100} {
		b.Run(fmt.Sprintf("subs=%d", subs), func(b *testing.B) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			br := New(Options{Logger: discardLogger()})
			defer br.Close()

			var got sync.WaitGroup
			lats := make([]latencies, subs)
			var readers sync.WaitGroup
			for i := range lats {
				ch := subscribe(b, ctx, br, Filter{WorkspaceID: "ws-1"})
				readers.Go(func() {
					for e := range ch {
						lats[i].add(e)
						got.Done()
					}
				})
			}
			e := benchEvent()
			b.ResetTimer()
			for range b.N {
				got.Add(subs)
				br.Publish(ctx, e)
				got.Wait()
			}
			b.StopTimer()
			cancel()
			readers.Wait()
			var all latencies
			for _, l := range lats {
				all.d = append(all.d, l.d...)
			}
			all.report(b)
		})
	}
}

// latencies samples publish→receive delays (every stride-th event).
type latencies struct {
	stride, n int
	d         []time.Duration
}

func (l *latencies) add(e Event) {
	if l.n++; l.stride <= 1 || l.n%l.stride == 0 {
		l.d = append(l.d, time.Since(e.At))
	}
}

func (l *latencies) report(b *testing.B) {
	if len(l.d) == 0 {
		return
	}
	slices.Sort(l.d)
	pct := func(p float64) float64 { return float64(l.d[int(p*float64(len(l.d)-1))].Nanoseconds()) / 1e3 }
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
}

// reportRate reports per published event figures; deliveries = events × subs.
func reportRate(b *testing.B, elapsed time.Duration, subs int) {
	b.ReportMetric(float64(elapsed.Nanoseconds())/float64(b.N), "ns/event")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(b.N*subs)/elapsed.Seconds(), "deliveries/s")
}
