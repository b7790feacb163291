package codebranch

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"tuttid/gitrepo"
)

// changesFresh is how long a worktree session's changed files, once read,
// answer the reads that follow. Each read runs git status in the worktree;
// a workspace's session list reads every worktree session's, and the GUI
// reads the list, an exploration and a session's row on events: eight
// branches running made hundreds of git processes a minute, the same
// answer each time. Every change tuttid makes to a worktree (a turn's
// checkpoint, an apply, an archive, restore or delete, an exploration's
// check: Touched) drops the session's answer at once; what a person
// changes by hand shows within changesFresh.
const changesFresh = 2 * time.Second

// changesCache keeps, by session, the last changed files read from its
// worktree (no patch), and shares a read under way with those that ask
// meanwhile. A drop takes the session's entry out of the map, a read
// under way included: its answer reaches those already waiting for it and
// no one after.
type changesCache struct {
	mu      sync.Mutex
	entries map[string]*changesEntry
}

type changesEntry struct {
	at   time.Time
	done chan struct{} // closed when the read ends
	diff gitrepo.Diff
	err  error
}

// read answers id's changed files from the cache when fresh, else runs
// fetch (once for all who ask meanwhile).
func (c *changesCache) read(ctx context.Context, id string, now func() time.Time, fetch func() (gitrepo.Diff, error)) (gitrepo.Diff, error) {
	c.mu.Lock()
	if c.entries == nil {
		c.entries = map[string]*changesEntry{}
	}
	if e := c.entries[id]; e != nil {
		done := e.done
		c.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
			return gitrepo.Diff{}, ctx.Err()
		}
		c.mu.Lock()
		fresh := e.err == nil && now().Sub(e.at) < changesFresh
		d, err := e.diff, e.err
		c.mu.Unlock()
		switch {
		case fresh:
			return gitrepo.Diff{Files: slices.Clone(d.Files)}, nil
		case err != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) && ctx.Err() == nil:
			// The reader that ran it gave up; this one reads.
		case err != nil:
			return gitrepo.Diff{}, err
		}
		c.mu.Lock()
	}
	e := &changesEntry{done: make(chan struct{})}
	c.entries[id] = e
	c.mu.Unlock()

	d, err := fetch()

	c.mu.Lock()
	e.diff, e.err, e.at = gitrepo.Diff{Files: slices.Clone(d.Files)}, err, now()
	if err != nil && c.entries[id] == e {
		delete(c.entries, id)
	}
	c.mu.Unlock()
	close(e.done)
	return d, err
}

// drop forgets id's answer, and any read of it under way.
func (c *changesCache) drop(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, id)
}

// Touched says tuttid changed the session's worktree (a check ran in it):
// the next read of its changes reads git.
func (s *Service) Touched(sessionID string) { s.changed.drop(sessionID) }
