package fork

import (
	"context"
	"fmt"
	"time"

	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/ent/forkjournal"
	"tuttid/store"
)

// Orphan is a provider thread a fork made but did not complete: a line of
// `tuttid orphans`.
type Orphan struct {
	ProviderThreadID     string    `json:"providerThreadId"`
	State                string    `json:"state"`
	ParentAgentSessionID string    `json:"parentAgentSessionId"`
	RequestID            string    `json:"requestId"`
	WorkspaceID          string    `json:"workspaceId"`
	CreatedAt            time.Time `json:"createdAt"`
	Error                string    `json:"error,omitempty"`
	// InstanceID is the instance that made the attempt: its Codex holds
	// the thread.
	InstanceID string `json:"instanceId"`
	// Worktree is the worktree the fork made for its child that no
	// session holds (code.go); clean removes it.
	Worktree string `json:"worktree,omitempty"`
}

// ListOrphans lists, oldest first, the journal's threads that no completed
// fork owns: orphaned (to clean), archived (cleaned), and forked (a fork in
// flight now, or one a crash cut short that the next start settles); and
// the attempts still pending, whose thread Codex may have made unseen (a
// fork in flight, or one that timed out: its thread unknown until a late
// reply or a settle finds it), with no thread id. It reads the store only,
// so it works beside a running server.
func ListOrphans(ctx context.Context, st *store.Store) ([]Orphan, error) {
	entries, err := st.Client.ForkJournal.Query().
		Where(forkjournal.Or(
			forkjournal.And(forkjournal.ChildProviderSessionIDNEQ(""),
				forkjournal.StateIn(forkjournal.StateForked, forkjournal.StateOrphaned, forkjournal.StateArchived)),
			forkjournal.StateEQ(forkjournal.StatePending))).
		Order(ent.Asc(forkjournal.FieldID)).All(ctx)
	if err != nil {
		return nil, apperr.Storage(err, "read the fork journal")
	}
	out := make([]Orphan, 0, len(entries))
	listed := map[int]bool{}
	for _, e := range entries {
		if e.ChildProviderSessionID == "" {
			listed[e.ID] = true
			out = append(out, orphanOf(e))
			continue
		}
		// A thread a session owns is no orphan, whatever an entry says.
		owned, err := st.Client.AgentSession.Query().Where(agentsession.ProviderSessionID(e.ChildProviderSessionID)).Exist(ctx)
		if err != nil {
			return nil, apperr.Storage(err, "check an orphan's owner")
		}
		if !owned {
			listed[e.ID] = true
			out = append(out, orphanOf(e))
		}
	}
	return listOrphanWorktrees(ctx, st, out, listed)
}

func orphanOf(e *ent.ForkJournal) Orphan {
	return Orphan{ProviderThreadID: e.ChildProviderSessionID, State: string(e.State),
		ParentAgentSessionID: e.ParentAgentSessionID, RequestID: e.RequestID, WorkspaceID: e.WorkspaceID,
		InstanceID: e.InstanceID, CreatedAt: e.CreatedAt, Error: e.Error, Worktree: e.WorktreePath}
}

// CleanOrphans archives every orphaned thread at the provider and records
// it. Attempts left pending or forked for longer than staleAfter (no
// request runs that long, so a crash cut them short) are settled first;
// younger ones may be in flight in a running server and are left alone. It
// returns the entries it archived.
func (s *Service) CleanOrphans(ctx context.Context, staleAfter time.Duration) ([]Orphan, error) {
	stale, err := s.store.Client.ForkJournal.Query().
		Where(forkjournal.StateIn(forkjournal.StatePending, forkjournal.StateForked),
			forkjournal.UpdatedAtLT(s.now().Add(-staleAfter))).
		Order(ent.Asc(forkjournal.FieldID)).All(ctx)
	if err != nil {
		return nil, apperr.Storage(err, "read the fork journal")
	}
	// Beside a running server, a younger pending attempt may be in flight:
	// a thread found at the provider may be its, so a settle claims none.
	busySince := s.now().Add(-staleAfter)
	for _, e := range stale {
		if err := s.settle(ctx, e, settleMode{final: true, busySince: busySince}); err != nil {
			s.log.WarnContext(ctx, "orphans clean: unfinished fork not settled", "request", e.RequestID, "err", err)
		}
	}
	// The worktrees of forks that did not finish go too (code.go).
	if err := s.reconcileWorktrees(ctx, busySince); err != nil {
		return nil, err
	}
	orphaned, err := s.store.Client.ForkJournal.Query().
		Where(forkjournal.StateEQ(forkjournal.StateOrphaned)).Order(ent.Asc(forkjournal.FieldID)).All(ctx)
	if err != nil {
		return nil, apperr.Storage(err, "read the fork journal")
	}
	var cleaned []Orphan
	var firstErr error
	for _, e := range orphaned {
		// A thread a session or another attempt holds is never archived
		// (the entry is recorded failed, without it).
		who, err := s.owner(ctx, e, e.ChildProviderSessionID)
		if err != nil {
			return cleaned, err
		}
		if who != "" {
			s.log.WarnContext(ctx, "orphans clean: thread not archived, it belongs to another; the entry made none",
				"request", e.RequestID, "child_thread", e.ChildProviderSessionID, "owner", who)
			s.journalClear(ctx, e, fmt.Sprintf("thread %s belongs to %s, not to this attempt", e.ChildProviderSessionID, who))
			continue
		}
		if err := s.rt.Archive(ctx, e.Provider, e.ChildProviderSessionID); err != nil {
			s.log.WarnContext(ctx, "orphans clean: thread not archived", "orphan_thread", e.ChildProviderSessionID, "err", err)
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		// Recorded by a conditional update: a concurrent clean may have won.
		if err := s.store.Client.ForkJournal.UpdateOneID(e.ID).Where(forkjournal.StateEQ(forkjournal.StateOrphaned)).
			SetState(forkjournal.StateArchived).SetError("").SetUpdatedAt(s.now()).Exec(ctx); err != nil && !ent.IsNotFound(err) {
			return cleaned, apperr.Storage(err, "record the archived thread")
		}
		e.State = forkjournal.StateArchived
		e.Error = ""
		cleaned = append(cleaned, orphanOf(e))
	}
	return cleaned, firstErr
}
