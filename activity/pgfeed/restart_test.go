package pgfeed

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tuttid/activity"
	"tuttid/store/pgtest"
)

// PostgreSQL restarts while two instances publish: the database is
// unavailable meanwhile (a statement fails), Publish does not wait for it,
// and once it is back both instances' subscribers have every event, in
// one order, without gap or duplicate: the writers kept their queues and
// the listeners reconnected and caught up from the table.
func TestPostgresRestartUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("restarts a PostgreSQL cluster")
	}
	c := pgtest.NewCluster(t)
	opts := activity.Options{Buffer: 1 << 15}
	a, b := instance(t, c.URL(), opts, 0), instance(t, c.URL(), opts, 0)
	ctx := t.Context()
	onA, first := sub(t, ctx, a, activity.Filter{WorkspaceID: "w"})
	onB, _ := sub(t, ctx, b, activity.Filter{WorkspaceID: "w"})

	var published atomic.Int64
	var slowest atomic.Int64 // the longest Publish call, in ns
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, f := range []*Feed{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				case <-time.After(time.Millisecond):
				}
				start := time.Now()
				f.Publish(ctx, delta("w", fmt.Sprint(i)))
				d := int64(time.Since(start))
				for cur := slowest.Load(); d > cur && !slowest.CompareAndSwap(cur, d); cur = slowest.Load() {
				}
				published.Add(1)
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	c.Stop(t)
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	if err := a.db.PingContext(pctx); err == nil {
		t.Error("the database answers while stopped")
	}
	cancel()
	time.Sleep(500 * time.Millisecond) // publishing on
	c.Start(t)
	time.Sleep(300 * time.Millisecond)
	close(stop)
	wg.Wait()

	n := int(published.Load())
	gotA, errA := collect(onA, n)
	gotB, errB := collect(onB, n)
	if err := errors.Join(errA, errB); err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string][]activity.Event{"A": gotA, "B": gotB} {
		if err := contiguous(got, first+1); err != nil {
			t.Errorf("on %s: %v", name, err)
		}
	}
	if d := time.Duration(slowest.Load()); d > 100*time.Millisecond {
		t.Errorf("a Publish took %v: it waited for the database", d)
	}
	t.Logf("%d events through a restart; slowest Publish %v", n, time.Duration(slowest.Load()))
}
