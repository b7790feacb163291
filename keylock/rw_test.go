package keylock

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestRWLocks(t *testing.T) {
	t.Parallel()
	t.Run("readers share a key", func(t *testing.T) {
		var l RWLocks
		unlock := l.RLock("k")
		done := make(chan struct{})
		go func() { l.RLock("k")(); close(done) }()
		<-done // would deadlock if a second reader waited on the first
		unlock()
	})
	t.Run("a writer waits for the readers", func(t *testing.T) {
		var l RWLocks
		unlock := l.RLock("k")
		var wrote atomic.Bool
		done := make(chan struct{})
		go func() { defer l.Lock("k")(); wrote.Store(true); close(done) }()
		select {
		case <-done:
			t.Fatal("the writer held the key while a reader did")
		case <-time.After(20 * time.Millisecond):
		}
		unlock()
		<-done
		if !wrote.Load() {
			t.Fatal("the writer never ran")
		}
	})
	t.Run("writers exclude each other and free the key", func(t *testing.T) {
		var l RWLocks
		var wg sync.WaitGroup
		n := 0
		for i := range 50 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if i%2 == 0 {
					defer l.Lock("k")()
					n++ // the race detector fails this if two writers hold "k"
					return
				}
				defer l.RLock("k")()
				_ = n
			}()
		}
		wg.Wait()
		if n != 25 {
			t.Fatalf("n = %d, want 25", n)
		}
		if len(l.locks) != 0 {
			t.Fatalf("%d keys left after every unlock, want 0", len(l.locks))
		}
	})
}
