package codebranch

import (
	"context"
	"fmt"
	"sync"

	"tuttid/ent"
	"tuttid/ent/sessioncode"
)

// Summary is what a list shows of a session's code (`tuttid tree`).
type Summary struct {
	Mode            string
	WorktreePath    string
	WorktreePresent bool
	// FilesChanged counts Changes' files; -1 when they could not be read
	// (a repository gone, a worktree deleted by hand).
	FilesChanged int
	// Added and Deleted are the lines of those files (0 when unread).
	Added, Deleted int
}

// Summaries reads the code of the sessions that have some, by session id.
// Each checkout is read once (SHARED sessions of one directory share it),
// up to summaryReaders at once: each read is git's, mostly waiting on the
// disk (an exploration lists up to eight fresh worktrees).
func (s *Service) Summaries(ctx context.Context, sessionIDs []string) (map[string]Summary, error) {
	out := map[string]Summary{}
	for start := 0; start < len(sessionIDs); start += 500 {
		ids := sessionIDs[start:min(start+500, len(sessionIDs))]
		rows, err := s.store.Client.SessionCode.Query().Where(sessioncode.AgentSessionIDIn(ids...)).All(ctx)
		if err != nil {
			return nil, fmt.Errorf("read the sessions' code: %w", err)
		}
		// One read per checkout: a WORKTREE session's own, a SHARED
		// directory's for all its sessions.
		byCheckout := map[string][]*ent.SessionCode{}
		var order []string
		for _, row := range rows {
			key := "session\x00" + row.AgentSessionID
			if row.Mode == sessioncode.ModeSHARED {
				key = "shared\x00" + row.RepositoryRoot
			}
			if _, ok := byCheckout[key]; !ok {
				order = append(order, key)
			}
			byCheckout[key] = append(byCheckout[key], row)
		}
		sums := make([]Summary, len(order))
		slots := make(chan struct{}, summaryReaders)
		var wg sync.WaitGroup
		for i, key := range order {
			wg.Add(1)
			slots <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-slots }()
				sums[i] = s.summary(ctx, byCheckout[key][0])
			}()
		}
		wg.Wait()
		for i, key := range order {
			for _, row := range byCheckout[key] {
				sum := sums[i]
				sum.Mode, sum.WorktreePath = string(row.Mode), row.WorktreePath
				sum.WorktreePresent = row.Mode != sessioncode.ModeWORKTREE || row.WorktreePresent
				out[row.AgentSessionID] = sum
			}
		}
	}
	return out, nil
}

// summaryReaders bounds Summaries' concurrent git reads.
const summaryReaders = 4

// summary counts the changes of row's checkout (Summary's counts only;
// Summaries fills in each session's own fields).
func (s *Service) summary(ctx context.Context, row *ent.SessionCode) Summary {
	var sum Summary
	d, err := s.ChangedFiles(ctx, row)
	if err != nil {
		s.log.DebugContext(ctx, "code: changes not read", "session", row.AgentSessionID, "err", err)
		sum.FilesChanged = -1
		return sum
	}
	sum.FilesChanged = len(d.Files)
	for _, f := range d.Files {
		sum.Added += f.Additions
		sum.Deleted += f.Deletions
	}
	return sum
}
