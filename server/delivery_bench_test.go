package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tuttid/benchtest"
	"tuttid/codex/codextest"
	"tuttid/ent"
	"tuttid/server"
	"tuttid/session"
)

// BenchmarkDeltaDeliveryFour is issue 32's second speed figure: while
// four turns stream at once, the time from the model server flushing a
// delta to Codex to a subscriber receiving it as MESSAGE_DELTA over a
// real WebSocket (graphql-transport-ws), p99, against the same with one
// turn alone. The real Codex and the test model server; each delta
// carries a unique mark, timed where the model server writes it
// (codextest.Reply.OnDelta) and where the subscriber reads it. Each
// iteration runs both (alternating which goes first); the metrics are
// the two p99s over all iterations and their ratio (the bound: 2x).
func BenchmarkDeltaDeliveryFour(b *testing.B) {
	const deltas = benchDeltas
	d := startDeliveryRig(b)
	var alone, four []time.Duration
	i := 0
	for b.Loop() {
		i++
		benchtest.Alternate(i, func() {
			alone = append(alone, d.turns(b, d.sessions[:1], deltas)...)
		}, func() {
			four = append(four, d.turns(b, d.sessions, deltas)...)
		})
	}
	p1, p4 := benchtest.Percentile(alone, 0.99), benchtest.Percentile(four, 0.99)
	b.ReportMetric(float64(p1.Microseconds())/1000, "alone-p99-ms")
	b.ReportMetric(float64(p4.Microseconds())/1000, "four-p99-ms")
	b.ReportMetric(float64(benchtest.Median(four).Microseconds())/1000, "four-p50-ms")
	b.ReportMetric(float64(p4)/float64(p1), "four/alone-p99")
}

// benchDeltas is each turn's deltas, 10 ms apart (a half-second reply).
const benchDeltas = 50

type deliveryRig struct {
	srv      *server.Server
	ws       string
	sessions []*ent.AgentSession
	mark     atomic.Int64

	mu       sync.Mutex
	flushed  map[string]time.Time // mark -> when the model server wrote it
	received map[string]time.Duration
	arrived  chan struct{} // a delta arrived

}

var deltaMark = regexp.MustCompile(`<d[0-9]+>`)

func startDeliveryRig(b *testing.B) *deliveryRig {
	b.Helper()
	ctx := context.Background()
	d := &deliveryRig{flushed: map[string]time.Time{}, received: map[string]time.Duration{}, arrived: make(chan struct{}, 1)}
	model := codextest.StartModelServer(b)
	model.SetReply(func(codextest.Request) codextest.Reply {
		chunks := make([]string, benchDeltas)
		for i := range chunks {
			chunks[i] = fmt.Sprintf("<d%d> ", d.mark.Add(1))
		}
		return codextest.Reply{Chunks: chunks, ChunkEvery: 10 * time.Millisecond, OnDelta: d.flush}
	})
	h := startServer(b, harnessOpts{model: model})
	d.srv = h.srv
	w, err := h.srv.Sessions.CreateWorkspace(ctx, "delivery", b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	d.ws = w.ID
	for range 4 {
		a, err := h.srv.Sessions.Start(ctx, session.StartInput{WorkspaceID: w.ID})
		if err != nil {
			b.Fatal(err)
		}
		d.sessions = append(d.sessions, a)
	}
	sub := h.ws(protoTransportWS).subscribe(`subscription($ws: ID!) { activity(workspaceId: $ws) { kind delta } }`, map[string]any{"ws": w.ID})
	go d.read(sub)
	return d
}

// flush is the model server's OnDelta: the mark leaves for Codex now.
// It is recorded before the write, so a subscriber never sees a mark
// before its time.
func (d *deliveryRig) flush(text string) {
	now := time.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, m := range deltaMark.FindAllString(text, -1) {
		d.flushed[m] = now
	}
}

// read times every mark the subscription delivers.
func (d *deliveryRig) read(sub *wsSub) {
	for r := range sub.C {
		now := time.Now()
		var ev struct {
			Activity struct{ Kind, Delta string }
		}
		if json.Unmarshal(r.Data, &ev) != nil || ev.Activity.Kind != "MESSAGE_DELTA" {
			continue
		}
		d.mu.Lock()
		for _, m := range deltaMark.FindAllString(ev.Activity.Delta, -1) {
			if at, ok := d.flushed[m]; ok {
				d.received[m] = now.Sub(at)
			}
		}
		d.mu.Unlock()
		select {
		case d.arrived <- struct{}{}:
		default:
		}
	}
}

// turns sends one turn to each session at once and returns the delivery
// time of every delta of them, once all arrived and the turns completed.
func (d *deliveryRig) turns(b *testing.B, sessions []*ent.AgentSession, deltas int) []time.Duration {
	b.Helper()
	d.mu.Lock()
	clear(d.flushed)
	clear(d.received)
	d.mu.Unlock()
	var wg sync.WaitGroup
	for _, a := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := d.srv.Sessions.Send(context.Background(), d.ws, a.ID, "stream"); err != nil {
				b.Error(err)
			}
		}()
	}
	wg.Wait()
	want := deltas * len(sessions)
	deadline := time.After(60 * time.Second)
	for {
		d.mu.Lock()
		got := len(d.received)
		d.mu.Unlock()
		if got >= want {
			break
		}
		select {
		case <-d.arrived:
		case <-deadline:
			d.mu.Lock()
			var missing []string
			for m := range d.flushed {
				if _, ok := d.received[m]; !ok {
					missing = append(missing, m)
				}
			}
			d.mu.Unlock()
			b.Fatalf("%d of %d deltas reached the subscriber; missing %v", got, want, missing)
		}
	}
	for _, a := range sessions {
		waitBenchTurn(b, d.srv, a.ID) // READY again
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]time.Duration, 0, len(d.received))
	for _, lat := range d.received {
		out = append(out, lat)
	}
	return out
}
