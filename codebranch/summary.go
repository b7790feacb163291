package codebranch

import (
	"context"
	"fmt"

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
// Each checkout is read once (SHARED sessions of one directory share it).
func (s *Service) Summaries(ctx context.Context, sessionIDs []string) (map[string]Summary, error) {
	out := map[string]Summary{}
	for start := 0; start < len(sessionIDs); start += 500 {
		ids := sessionIDs[start:min(start+500, len(sessionIDs))]
		rows, err := s.store.Client.SessionCode.Query().Where(sessioncode.AgentSessionIDIn(ids...)).All(ctx)
		if err != nil {
			return nil, fmt.Errorf("read the sessions' code: %w", err)
		}
		counted := map[string]Summary{} // SHARED: by repository root
		for _, row := range rows {
			out[row.AgentSessionID] = s.summary(ctx, row, counted)
		}
	}
	return out, nil
}

func (s *Service) summary(ctx context.Context, row *ent.SessionCode, counted map[string]Summary) Summary {
	sum := Summary{Mode: string(row.Mode), WorktreePath: row.WorktreePath,
		WorktreePresent: row.Mode != sessioncode.ModeWORKTREE || row.WorktreePresent}
	if row.Mode == sessioncode.ModeSHARED {
		if c, ok := counted[row.RepositoryRoot]; ok {
			sum.FilesChanged, sum.Added, sum.Deleted = c.FilesChanged, c.Added, c.Deleted
			return sum
		}
	}
	d, err := s.ChangedFiles(ctx, row)
	if err != nil {
		s.log.DebugContext(ctx, "code: changes not read", "session", row.AgentSessionID, "err", err)
		sum.FilesChanged = -1
	} else {
		sum.FilesChanged = len(d.Files)
		for _, f := range d.Files {
			sum.Added += f.Additions
			sum.Deleted += f.Deletions
		}
	}
	if row.Mode == sessioncode.ModeSHARED {
		counted[row.RepositoryRoot] = sum
	}
	return sum
}
