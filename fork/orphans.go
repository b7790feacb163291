package fork

import (
	"context"
	"time"

	"tuttid/apperr"
	"tuttid/ent"
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
}

// ListOrphans lists, oldest first, the journal's threads that no completed
// fork owns: orphaned (to clean), archived (cleaned), and forked (a fork in
// flight now, or one a crash cut short that the next start settles). It
// reads the store only, so it works beside a running server.
func ListOrphans(ctx context.Context, st *store.Store) ([]Orphan, error) {
	entries, err := st.Client.ForkJournal.Query().
		Where(forkjournal.ChildProviderSessionIDNEQ(""),
			forkjournal.StateIn(forkjournal.StateForked, forkjournal.StateOrphaned, forkjournal.StateArchived)).
		Order(ent.Asc(forkjournal.FieldID)).All(ctx)
	if err != nil {
		return nil, apperr.Storage(err, "read the fork journal")
	}
	out := make([]Orphan, 0, len(entries))
	for _, e := range entries {
		out = append(out, orphanOf(e))
	}
	return out, nil
}

func orphanOf(e *ent.ForkJournal) Orphan {
	return Orphan{ProviderThreadID: e.ChildProviderSessionID, State: string(e.State),
		ParentAgentSessionID: e.ParentAgentSessionID, RequestID: e.RequestID, WorkspaceID: e.WorkspaceID,
		CreatedAt: e.CreatedAt, Error: e.Error}
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
	for _, e := range stale {
		if err := s.settle(ctx, e, true); err != nil {
			s.log.WarnContext(ctx, "orphans clean: unfinished fork not settled", "request", e.RequestID, "err", err)
		}
	}
	orphaned, err := s.store.Client.ForkJournal.Query().
		Where(forkjournal.StateEQ(forkjournal.StateOrphaned)).Order(ent.Asc(forkjournal.FieldID)).All(ctx)
	if err != nil {
		return nil, apperr.Storage(err, "read the fork journal")
	}
	var cleaned []Orphan
	var firstErr error
	for _, e := range orphaned {
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
