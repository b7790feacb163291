package codebranch

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"tuttid/gitrepo"
)

func TestChangesCache(t *testing.T) {
	diff := func(path string) gitrepo.Diff { return gitrepo.Diff{Files: []gitrepo.FileChange{{Path: path}}} }
	for _, c := range []struct {
		name string
		// between runs between the first read and the second.
		between     func(c *changesCache, clock *time.Time)
		wantFetches int
	}{
		{"a read within changesFresh is answered", func(*changesCache, *time.Time) {}, 1},
		{"after changesFresh git is read again", func(_ *changesCache, clock *time.Time) { *clock = clock.Add(changesFresh) }, 2},
		{"a drop makes the next read read", func(c *changesCache, _ *time.Time) { c.drop("s") }, 2},
		{"another session's drop does not", func(c *changesCache, _ *time.Time) { c.drop("other") }, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			var cache changesCache
			clock := time.Unix(0, 0)
			now := func() time.Time { return clock }
			fetches := 0
			fetch := func() (gitrepo.Diff, error) { fetches++; return diff("a.txt"), nil }
			d, err := cache.read(context.Background(), "s", now, fetch)
			if err != nil || d.Files[0].Path != "a.txt" {
				t.Fatalf("first read: %+v, %v", d, err)
			}
			d.Files[0].Path = "changed by the caller"
			c.between(&cache, &clock)
			d, err = cache.read(context.Background(), "s", now, fetch)
			if err != nil || d.Files[0].Path != "a.txt" {
				t.Fatalf("second read: %+v, %v", d, err)
			}
			if fetches != c.wantFetches {
				t.Errorf("git read %d times, want %d", fetches, c.wantFetches)
			}
		})
	}
}

// TestChangesCacheDropDuringRead: a read under way when the worktree
// changes is answered to those who asked before, and not kept.
func TestChangesCacheDropDuringRead(t *testing.T) {
	var cache changesCache
	now := time.Now
	started, release := make(chan struct{}), make(chan struct{})
	var fetches atomic.Int32
	slow := func() (gitrepo.Diff, error) {
		fetches.Add(1)
		close(started)
		<-release
		return gitrepo.Diff{}, nil
	}
	done := make(chan error)
	go func() {
		_, err := cache.read(context.Background(), "s", now, slow)
		done <- err
	}()
	<-started
	cache.drop("s")
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := cache.read(context.Background(), "s", now, func() (gitrepo.Diff, error) { fetches.Add(1); return gitrepo.Diff{}, nil }); err != nil {
		t.Fatal(err)
	}
	if n := fetches.Load(); n != 2 {
		t.Errorf("git read %d times, want 2: the read under the drop was kept", n)
	}
}

// TestChangesCacheSharesARead: reads that ask while one runs wait for it;
// an error is theirs too and is not kept.
func TestChangesCacheSharesARead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var cache changesCache
		release := make(chan struct{})
		var fetches atomic.Int32
		failing := func() (gitrepo.Diff, error) {
			fetches.Add(1)
			<-release
			return gitrepo.Diff{}, errors.New("git failed")
		}
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for range 4 {
			wg.Go(func() {
				_, err := cache.read(context.Background(), "s", time.Now, failing)
				errs <- err
			})
		}
		synctest.Wait() // one reads, three wait for it
		close(release)
		wg.Wait()
		close(errs)
		for err := range errs {
			if err == nil || err.Error() != "git failed" {
				t.Errorf("a reader got %v, want git's error", err)
			}
		}
		if n := fetches.Load(); n != 1 {
			t.Errorf("four readers at once ran git %d times, want 1", n)
		}
		if _, err := cache.read(context.Background(), "s", time.Now, func() (gitrepo.Diff, error) { fetches.Add(1); return gitrepo.Diff{}, nil }); err != nil {
			t.Errorf("the error was kept: %v", err)
		}
	})
}
