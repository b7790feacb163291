package store_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tuttid/store"
)

// TestWALBounded: under readers whose transactions always overlap (one
// starts before the other ends, so SQLite's own PASSIVE checkpoints never
// rewind the WAL), 48 MiB written back to back through the client in 1 MiB
// statements grow the WAL to about all of it when nothing else checkpoints
// (what tuttid did before issue 22, 11), and stay under 16 MiB with
// BoundWAL (a check every 20 ms, TRUNCATE over 4 MiB); the readers and
// writers all succeed.
func TestWALBounded(t *testing.T) {
	const (
		writes = 48
		over   = 4 << 20
		bound  = 16 << 20
	)
	for _, tc := range []struct {
		name    string
		bounded bool
	}{
		{"without BoundWAL the WAL grows", false},
		{"BoundWAL", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			maxWAL := walUnderOverlappingReaders(t, writes, tc.bounded, over)
			t.Logf("largest WAL seen: %.1f MiB", float64(maxWAL)/(1<<20))
			switch {
			case tc.bounded && maxWAL > bound:
				t.Errorf("the WAL reached %d bytes, over the bound of %d", maxWAL, bound)
			case !tc.bounded && maxWAL < writes<<20*3/4:
				t.Errorf("without BoundWAL the WAL reached only %d bytes: the readers did not hold it", maxWAL)
			}
		})
	}
}

func walUnderOverlappingReaders(t *testing.T, writes int, bounded bool, over int64) int64 {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "tuttid.db"), store.Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var wg sync.WaitGroup
	if bounded {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st.BoundWAL(ctx, 20*time.Millisecond, over, slog.New(slog.NewTextHandler(os.Stderr, nil)))
		}()
	}
	// Two readers, each holding a read transaction 40 ms, started 20 ms
	// apart: at every moment one of them reads a snapshot.
	readers := make(chan error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(i) * 20 * time.Millisecond)
			for ctx.Err() == nil {
				if err := readFor(ctx, st, 40*time.Millisecond); err != nil && ctx.Err() == nil {
					readers <- err
					return
				}
			}
		}()
	}
	var maxWAL atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			if s := st.WALSize(); s > maxWAL.Load() {
				maxWAL.Store(s)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	time.Sleep(30 * time.Millisecond)
	// Back-to-back writes through the client, 1 MiB of text each (random,
	// so that nothing shrinks it).
	raw := make([]byte, 3<<18)
	for i := range writes {
		_, _ = rand.Read(raw)
		name := base64.StdEncoding.EncodeToString(raw) // 1 MiB
		if err := st.Client.Workspace.Create().SetID(fmt.Sprint("w", i)).SetName(name).SetRootPath("/tmp").Exec(ctx); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	time.Sleep(50 * time.Millisecond)
	cancel()
	wg.Wait()
	select {
	case err := <-readers:
		t.Fatalf("a reader: %v", err)
	default:
	}
	if s := st.WALSize(); s > maxWAL.Load() {
		maxWAL.Store(s)
	}
	return maxWAL.Load()
}

// readFor holds a read transaction (a snapshot of the WAL) for d.
func readFor(ctx context.Context, st *store.Store, d time.Duration) error {
	conn, err := st.DB.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN DEFERRED"); err != nil {
		return err
	}
	var n int
	if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM workspaces").Scan(&n); err != nil {
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		return err
	}
	time.Sleep(d)
	_, err = conn.ExecContext(context.WithoutCancel(ctx), "COMMIT")
	return err
}
