package store

import (
	"context"
	"os"
	"time"
)

// SQLite's automatic checkpoint runs in the connection that commits,
// after the commit and before its statement returns: the commit of an
// 80 MB fork waited 0.7-0.9 s for it, half the time the fork spent
// storing its child (issue 26). The DSN turns it off (wal_autocheckpoint
// 0) and the store runs the same PASSIVE checkpoint on a connection of
// its own: it copies what no reader still needs and never blocks a writer.
// It runs once the WAL has changed and either grew by checkpointGrowth
// (SQLite's own threshold, 1000 pages) or checkpointAfter has passed.
const (
	checkpointTick   = 250 * time.Millisecond
	checkpointGrowth = 4 << 20
	checkpointAfter  = 2 * time.Second
)

// walStamp is what the checkpointer knows of the WAL file without
// reading it.
type walStamp struct {
	size int64
	mod  time.Time
}

func (s *Store) walStamp() walStamp {
	fi, err := os.Stat(s.path + "-wal")
	if err != nil {
		return walStamp{}
	}
	return walStamp{fi.Size(), fi.ModTime()}
}

// checkpoints runs the store's checkpoints until ctx ends, then closes
// done.
func (s *Store) checkpoints(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(checkpointTick)
	defer t.Stop()
	last, lastAt := s.walStamp(), time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := s.walStamp()
		if now == last || (now.size-last.size < checkpointGrowth && time.Since(lastAt) < checkpointAfter) {
			continue
		}
		if err := s.checkpointPassive(ctx); err != nil {
			// Tried again at the next tick: what fails it (a full disk)
			// fails the writers too, and they report it.
			continue
		}
		last, lastAt = s.walStamp(), time.Now()
	}
}

// checkpointPassive copies into the database what the WAL holds and no
// reader still needs.
func (s *Store) checkpointPassive(ctx context.Context) error {
	var busy, logFrames, done int
	return s.DB.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &logFrames, &done)
}
