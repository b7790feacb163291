package store

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// The WAL's bounds. SQLite's automatic checkpoint (every 1000 pages) is
// PASSIVE: it copies what no reader still needs and never rewinds the WAL
// while any reader uses it, so under overlapping readers the WAL grew
// without bound (266 MB for a 94 MB database in 3 s, issue 22) and stayed
// that size after a checkpoint succeeded.
const (
	// journalSizeLimit is the size SQLite truncates the WAL to whenever it
	// rewinds it (the journal_size_limit pragma, in the DSN).
	journalSizeLimit = 32 << 20
	// DefaultWALCheckEvery and DefaultWALTruncateOver: BoundWAL's
	// defaults, a check every few seconds and a TRUNCATE checkpoint once the
	// WAL passes 64 MiB (a fork's history is written in one transaction,
	// so one write can pass it alone).
	DefaultWALCheckEvery   = 2 * time.Second
	DefaultWALTruncateOver = 64 << 20
	// walCheckpointBusy bounds how long a TRUNCATE checkpoint waits for
	// the readers that still need the WAL; writers wait behind it
	// meanwhile. A checkpoint that times out is tried again later.
	walCheckpointBusy = 2 * time.Second
)

// WALSize is the size of the database's WAL file (0 when there is none).
func (s *Store) WALSize() int64 { return s.walStamp().size }

// BoundWAL keeps the WAL bounded until ctx ends: every `every` it looks at
// the WAL's size and, over `over` bytes, runs a TRUNCATE checkpoint, which
// waits (up to walCheckpointBusy) for the readers that still use the WAL,
// copies it into the database and truncates it to zero bytes. New readers
// do not hold it back (they read the database once the WAL is copied).
// The server runs it for its life.
func (s *Store) BoundWAL(ctx context.Context, every time.Duration, over int64, log *slog.Logger) {
	if s.path == "" { // PostgreSQL: no WAL file of tuttid's to bound
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if size := s.WALSize(); size > over {
			if err := s.truncateWAL(ctx); err != nil && ctx.Err() == nil && log != nil {
				log.WarnContext(ctx, "WAL checkpoint failed; trying again later", "wal_bytes", size, "err", err)
			}
		}
	}
}

// truncateWAL runs PRAGMA wal_checkpoint(TRUNCATE) on a connection of its
// own, with a shorter busy timeout than the writers' 30 s, while the
// client's new statements wait (walGate).
func (s *Store) truncateWAL(ctx context.Context) error {
	if s.gate != nil {
		resume := s.gate.pause()
		defer resume()
	}
	conn, err := s.DB.Conn(ctx)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", walCheckpointBusy.Milliseconds())); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	// Back to the DSN's timeout before the connection returns to the pool.
	defer func() { _, _ = conn.ExecContext(context.WithoutCancel(ctx), "PRAGMA busy_timeout = 30000") }()
	// A checkpoint another connection runs (the store's PASSIVE one,
	// checkpoint.go) makes this one answer busy at once, without the busy
	// handler: try again until the bound.
	deadline := time.Now().Add(walCheckpointBusy)
	for {
		var busy, logFrames, done int
		if err := conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logFrames, &done); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
		if busy == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("checkpoint: the WAL stayed busy for %s (%d of %d frames copied)", walCheckpointBusy, done, logFrames)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}
