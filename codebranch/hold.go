package codebranch

import (
	"context"
	"fmt"
	"os"

	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/ent/sessioncode"
	"tuttid/gitrepo"
)

// A read of a session's code runs git in its worktree (a snapshot of its
// files, its HEAD and branch) while archive and delete may remove that
// worktree. Rather than retry a read that failed in a removed directory
// (which covers some interleavings only), reads hold the session's
// worktree shared and archive, restore and delete hold it alone while
// they remove or replace it: a read sees the worktree whole or, once it is
// archived, reads the archive checkpoint from commits only.

// holdForRead holds row's worktree for reading until release is called.
// The row to read is row while its worktree is there, else the row read
// again (archived meanwhile: its files are the archive checkpoint). A
// session deleted meanwhile is agent.session_not_found.
func (s *Service) holdForRead(ctx context.Context, row *ent.SessionCode) (held *ent.SessionCode, release func(), err error) {
	if row.Mode != sessioncode.ModeWORKTREE {
		return row, func() {}, nil
	}
	release = s.checkouts.RLock(row.AgentSessionID)
	if !row.WorktreePresent {
		return row, release, nil
	}
	if _, statErr := os.Stat(row.WorktreePath); statErr == nil {
		// Present now, and no archive or delete can remove it until release.
		return row, release, nil
	}
	again, err := s.Row(ctx, row.AgentSessionID)
	if err != nil {
		release()
		return nil, nil, apperr.Storage(err, "read the session's code")
	}
	if again == nil {
		release()
		return nil, nil, apperr.New(apperr.SessionNotFound, "session %q was deleted while its code was read", row.AgentSessionID)
	}
	return again, release, nil
}

// holdForRemoval holds a session's worktree alone (no read runs in it)
// until the returned func is called: archive, restore and delete hold it
// while they remove or replace the worktree.
func (s *Service) holdForRemoval(sessionID string) (release func()) {
	unlock := s.checkouts.Lock(sessionID)
	return func() {
		s.changed.drop(sessionID)
		unlock()
	}
}

// commitsRepo opens row's repository for reads of commits only (diffs
// between checkpoints): at its shared git directory, which no archive or
// delete removes, so git never runs in a worktree going away. A row with
// no recorded common directory opens its checkout.
func (s *Service) commitsRepo(ctx context.Context, row *ent.SessionCode) (*gitrepo.Repo, error) {
	if row.CommonDir == "" {
		return s.repo(ctx, repoAt{dir: row.RepositoryRoot})
	}
	r, err := s.repo(ctx, repoAt{gitDir: row.CommonDir})
	if err != nil {
		return nil, fmt.Errorf("open the repository of session %s: %w", row.AgentSessionID, err)
	}
	return r, nil
}
