package activity

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tuttid/ent"
	"tuttid/logtest"
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
// reader, no broker. BenchmarkFanout runs it again in each of its runs,
// with the same number of events, for its ratios.
func BenchmarkBaselineChan(b *testing.B) {
	b.ReportAllocs()
	elapsed, lat := baselineChan(b.N)
	b.StopTimer()
	reportRate(b, elapsed, 1)
	lat.report(b)
}

// baselineChan sends n events through one buffered channel to one reader
// and returns the time until the reader had them all, and their latencies.
func baselineChan(n int) (time.Duration, *latencies) {
	ch := make(chan Event, benchBuffer)
	done := make(chan struct{})
	lat := &latencies{stride: max(1, n/1000)}
	go func() {
		defer close(done)
		for e := range ch {
			lat.add(e)
		}
	}()
	e := benchEvent()
	start := time.Now()
	for i := range n {
		e.Seq, e.At = int64(i+1), time.Now()
		ch <- e
	}
	close(ch)
	<-done
	return time.Since(start), lat
}

// baselinePingPong is BenchmarkPublishReceive's floor: n events through
// one channel to one reader, each sent once the previous one arrived.
func baselinePingPong(n int) *latencies {
	ch := make(chan Event, benchBuffer)
	got := make(chan struct{})
	lat := &latencies{}
	go func() {
		for e := range ch {
			lat.add(e)
			got <- struct{}{}
		}
		close(got)
	}()
	e := benchEvent()
	for i := range n {
		e.Seq, e.At = int64(i+1), time.Now()
		ch <- e
		<-got
	}
	close(ch)
	<-got
	return lat
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
// latencies under that sustained load (so they include queueing);
// allocs/event counts every allocation while publishing and receiving.
// ratio, p50-ratio and p99-ratio are over BenchmarkBaselineChan's run with
// the same number of events in the same run; delivery-ratio is the time of
// one delivery (ns/event / S) over one channel send.
func BenchmarkFanout(b *testing.B) {
	for _, subs := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("subs=%d", subs), func(b *testing.B) {
			b.ReportAllocs()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			br := New(Options{Buffer: benchBuffer, Logger: logtest.Discard()})
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
				// allocated up front: allocs/event counts the broker's
				lats[i].d = make([]time.Duration, 0, b.N/lats[i].stride+1)
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
			var mem runtime.MemStats
			runtime.ReadMemStats(&mem)
			mallocs := mem.Mallocs
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
			runtime.ReadMemStats(&mem)
			b.ReportMetric(float64(mem.Mallocs-mallocs)/float64(b.N), "allocs/event")

			reportRate(b, elapsed, subs)
			var all latencies
			for _, l := range lats {
				all.d = append(all.d, l.d...)
			}
			all.report(b)
			base, baseLat := baselineChan(b.N)
			reportRatios(b, elapsed, base, &all, baseLat)
			b.ReportMetric(float64(elapsed)/float64(base*time.Duration(subs)), "delivery-ratio")
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
// Its ratios are over the same through one channel to one reader
// (baselinePingPong), in the same run.
func BenchmarkPublishReceive(b *testing.B) {
	for _, subs := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("subs=%d", subs), func(b *testing.B) {
			b.ReportAllocs()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			br := New(Options{Logger: logtest.Discard()})
			defer br.Close()

			var got sync.WaitGroup
			lats := make([]latencies, subs)
			var readers sync.WaitGroup
			for i := range lats {
				lats[i].d = make([]time.Duration, 0, b.N) // allocs/event counts the broker's
				ch := subscribe(b, ctx, br, Filter{WorkspaceID: "ws-1"})
				readers.Go(func() {
					for e := range ch {
						lats[i].add(e)
						got.Done()
					}
				})
			}
			e := benchEvent()
			var mem runtime.MemStats
			runtime.ReadMemStats(&mem)
			mallocs := mem.Mallocs
			b.ResetTimer()
			start := time.Now()
			for range b.N {
				got.Add(subs)
				br.Publish(ctx, e)
				got.Wait()
			}
			elapsed := time.Since(start)
			b.StopTimer()
			runtime.ReadMemStats(&mem)
			b.ReportMetric(float64(mem.Mallocs-mallocs)/float64(b.N), "allocs/event")
			cancel()
			readers.Wait()
			var all latencies
			for _, l := range lats {
				all.d = append(all.d, l.d...)
			}
			all.report(b)
			start = time.Now()
			baseLat := baselinePingPong(b.N)
			reportRatios(b, elapsed, time.Since(start), &all, baseLat)
		})
	}
}

// reportRatios reports the time per event and the p50/p99 latencies over
// the baseline's in the same run (ratio, p50-ratio, p99-ratio).
func reportRatios(b *testing.B, elapsed, base time.Duration, lat, baseLat *latencies) {
	b.ReportMetric(float64(elapsed)/float64(base), "ratio")
	if p50, p99, ok := lat.percentiles(); ok {
		if b50, b99, ok := baseLat.percentiles(); ok {
			b.ReportMetric(float64(p50)/float64(max(b50, 1)), "p50-ratio")
			b.ReportMetric(float64(p99)/float64(max(b99, 1)), "p99-ratio")
		}
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

func (l *latencies) percentiles() (p50, p99 time.Duration, ok bool) {
	if len(l.d) == 0 {
		return 0, 0, false
	}
	slices.Sort(l.d)
	pct := func(p float64) time.Duration { return l.d[int(p*float64(len(l.d)-1))] }
	return pct(0.50), pct(0.99), true
}

func (l *latencies) report(b *testing.B) {
	if p50, p99, ok := l.percentiles(); ok {
		b.ReportMetric(float64(p50.Nanoseconds())/1e3, "p50-µs")
		b.ReportMetric(float64(p99.Nanoseconds())/1e3, "p99-µs")
	}
}

// reportRate reports per published event figures; deliveries = events × subs.
func reportRate(b *testing.B, elapsed time.Duration, subs int) {
	b.ReportMetric(float64(elapsed.Nanoseconds())/float64(b.N), "ns/event")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(b.N*subs)/elapsed.Seconds(), "deliveries/s")
}
