package session

import (
	"context"
	"slices"
	"strings"

	"tuttid/activity"
	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/ent/predicate"
	"tuttid/lineage"
	"tuttid/validate"
)

// UpdateInput changes a session; nil fields are kept.
type UpdateInput struct {
	WorkspaceID    string
	AgentSessionID string
	// Title is stored trimmed; "" clears it (displayTitle falls back).
	Title *string
	// Archived true archives the session and every session forked from
	// it, transitively (its branch); false restores that branch and the
	// session's ancestors, so that it shows in the tree again.
	Archived *bool
}

// Update renames, archives or restores a session, in one transaction, and
// publishes SESSION_UPDATED for each session it changed. A restore makes
// the WORKTREE sessions' worktrees again before it commits: when one
// cannot be made, it fails (agent.fork_code_failed) and changes nothing.
func (s *Service) Update(ctx context.Context, in UpdateInput) (*ent.AgentSession, error) {
	a, err := s.read.RequireSession(ctx, in.WorkspaceID, in.AgentSessionID)
	if err != nil {
		return nil, err
	}
	if in.Title == nil && in.Archived == nil {
		return nil, apperr.New(apperr.InvalidInput, "nothing to update: give a title, archived, or both")
	}
	var title string
	if in.Title != nil {
		title = strings.TrimSpace(*in.Title)
		if err := validate.Line("title", title, validate.MaxTitleLen); err != nil {
			return nil, err
		}
	}
	var flip []predicate.AgentSession
	restored, undo := []string(nil), func(context.Context) {}
	if in.Archived != nil {
		// Archives and restores in a workspace go one at a time: a restore
		// makes its worktrees before it commits, and an archive in between
		// would remove them under it.
		defer s.guards.Lock("archive\x00" + a.WorkspaceID)()
		flip = archiveFlip(a, *in.Archived)
		if !*in.Archived {
			// The worktrees first, all or none: a restore that cannot make
			// one fails, and the sessions stay archived.
			if restored, err = s.store.Client.AgentSession.Query().Where(flip...).IDs(ctx); err != nil {
				return nil, apperr.Storage(err, "read the sessions to restore")
			}
			if undo, err = s.restoreWorktrees(ctx, restored); err != nil {
				return nil, err
			}
		}
	}
	now := s.now()
	var changed []*ent.AgentSession
	renamed := false
	write := func(tx *ent.Tx) error {
		if in.Title != nil && title != a.Title {
			if err := tx.AgentSession.UpdateOneID(a.ID).SetTitle(title).SetUpdatedAt(now).Exec(ctx); err != nil {
				return err
			}
			changed, renamed = append(changed, a), true
		}
		if in.Archived == nil {
			return nil
		}
		// The transaction holds the write lock from its start, so the rows
		// read are the rows the update changes.
		rows, err := tx.AgentSession.Query().Where(flip...).All(ctx)
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			return nil
		}
		if err := tx.AgentSession.Update().Where(flip...).SetArchived(*in.Archived).SetUpdatedAt(now).Exec(ctx); err != nil {
			return err
		}
		for _, r := range rows {
			if r.ID == a.ID && renamed {
				continue // already in changed
			}
			changed = append(changed, r)
		}
		return nil
	}
	var updates Staged
	err = s.store.WithTx(ctx, func(tx *ent.Tx) error {
		if err := write(tx); err != nil {
			return err
		}
		// Events carry each session as committed (copies: changed stays
		// as read, for flipped below).
		events := make([]activity.Event, len(changed))
		for i, c := range changed {
			cp := *c
			if in.Title != nil && c.ID == a.ID {
				cp.Title = title
			}
			if in.Archived != nil {
				cp.Archived = *in.Archived
			}
			cp.UpdatedAt = now
			events[i] = sessionUpdated(&cp)
		}
		var err error
		updates, err = s.changes.stage(ctx, tx, events...)
		return err
	})
	if err != nil {
		undo(ctx)
		return nil, apperr.Storage(err, "update the session")
	}
	if in.Archived != nil {
		var flipped []string
		for _, c := range changed {
			if c.Archived != *in.Archived { // as read before the update
				flipped = append(flipped, c.ID)
			}
		}
		if *in.Archived {
			s.archiveWorktrees(ctx, flipped)
		} else if missed := notIn(flipped, restored); len(missed) > 0 {
			// Archived after the worktrees were made (by another instance):
			// too late to refuse the restore.
			if _, err := s.restoreWorktrees(ctx, missed); err != nil {
				s.log.WarnContext(ctx, "restore: a worktree was not made again", "session", a.ID, "err", err)
			}
		}
	}
	s.Announce(ctx, updates)
	updated, err := s.store.Client.AgentSession.Get(ctx, a.ID)
	if err != nil {
		return nil, apperr.Storage(err, "read the updated session")
	}
	return updated, nil
}

// archiveFlip selects the sessions an archive (a's branch) or a restore
// (a's branch and its ancestors) changes.
func archiveFlip(a *ent.AgentSession, archived bool) []predicate.AgentSession {
	scope := lineage.InSubtree(a.WorkspaceID, a.ID)
	if !archived {
		scope = agentsession.Or(scope, lineage.InChain(a.WorkspaceID, a.ID))
	}
	return []predicate.AgentSession{scope, agentsession.ArchivedNEQ(archived)}
}

// notIn is the ids of ids not in set.
func notIn(ids, set []string) []string {
	var out []string
	for _, id := range ids {
		if !slices.Contains(set, id) {
			out = append(out, id)
		}
	}
	return out
}
