package keylock

import (
	"sync"
	"testing"
)

func TestLockSerializesOneKeyAndFreesIt(t *testing.T) {
	t.Parallel()
	var l Locks
	var wg sync.WaitGroup
	n := 0
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer l.Lock("k")()
			n++ // the race detector fails this if two hold "k" at once
		}()
	}
	wg.Wait()
	if n != 50 {
		t.Fatalf("n = %d, want 50", n)
	}
	if len(l.locks) != 0 {
		t.Fatalf("%d keys left after every unlock, want 0", len(l.locks))
	}
}

func TestLockKeysAreIndependent(t *testing.T) {
	t.Parallel()
	var l Locks
	unlockA := l.Lock("a")
	defer unlockA()
	done := make(chan struct{})
	go func() { l.Lock("b")(); close(done) }()
	<-done // would deadlock if "b" waited on "a"
}
