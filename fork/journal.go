package fork

import (
	"context"
	"errors"
	"fmt"
	"time"

	"tuttid/agent"
	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/ent/forkjournal"
)

// The fork journal: every attempt is recorded before Codex is called
// (pending), gets the child thread id when thread/fork answers (forked),
// and is marked done in the transaction that stores the child. Any other
// ending is recorded too: failed (Codex made no thread), orphaned (a thread
// no session owns) or archived (that thread archived at Codex). Entries a
// crash left pending or forked are settled by Reconcile at start, or by a
// replay of the same request: their thread is archived, never adopted (see
// the README, "Crash safety").

// journalStart records an attempt before the provider is called.
func (s *Service) journalStart(ctx context.Context, in Input, fingerprint string, parent *ent.AgentSession, childID string) (*ent.ForkJournal, error) {
	now := s.now()
	e, err := s.store.Client.ForkJournal.Create().
		SetWorkspaceID(in.WorkspaceID).SetRequestID(in.RequestID).SetFingerprint(fingerprint).
		SetParentAgentSessionID(parent.ID).SetParentProviderSessionID(parent.ProviderSessionID).
		SetChildAgentSessionID(childID).SetProvider(parent.Provider).SetCwd(parent.Cwd).
		SetLastTurnID(in.LastTurnID).SetState(forkjournal.StatePending).SetInstanceID(s.instanceID).
		SetCreatedAt(now).SetUpdatedAt(now).
		Save(ctx)
	if ent.IsConstraintError(err) {
		return nil, apperr.New(apperr.ForkTargetConflict,
			"session %q is being made by another fork request; choose another targetAgentSessionId or omit it", childID)
	}
	if err != nil {
		return nil, apperr.Storage(err, "record the fork request")
	}
	return e, nil
}

// journalSet records how an attempt stands; thread is kept when empty. A
// failure is logged, not returned: the entry stays at its earlier state
// (Reconcile settles a pending or forked one at the next start; an
// orphaned one is listed by tuttid orphans and settled by its clean).
func (s *Service) journalSet(ctx context.Context, e *ent.ForkJournal, state forkjournal.State, thread, reason string) {
	// One UPDATE (updatedOne).
	u := s.store.Client.ForkJournal.Update().Where(forkjournal.ID(e.ID)).SetState(state).SetError(reason).SetUpdatedAt(s.now())
	if thread != "" {
		u.SetChildProviderSessionID(thread)
	}
	// Recorded even when the caller's deadline passed (a bounded settle).
	n, err := u.Save(context.WithoutCancel(ctx))
	if err = updatedOne(e.ID, n, err); err != nil {
		s.log.ErrorContext(ctx, "fork journal: entry not updated; it keeps its earlier state (pending or forked: settled at the next start; orphaned: listed by tuttid orphans, settled by tuttid orphans clean)",
			"journal", e.ID, "request", e.RequestID, "state", state, "earlier_state", e.State,
			"child_thread", thread, "err", err)
	}
}

// priorAttempt looks at the request's last attempt when it has no stored
// child: different parameters conflict; an attempt a crash left unfinished
// is settled first, so that the new attempt is the only one with a child.
func (s *Service) priorAttempt(ctx context.Context, in Input, fingerprint string) error {
	e, err := s.store.Client.ForkJournal.Query().
		Where(forkjournal.WorkspaceID(in.WorkspaceID), forkjournal.RequestID(in.RequestID)).
		Order(ent.Desc(forkjournal.FieldID)).First(ctx)
	if ent.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return apperr.Storage(err, "read the fork journal")
	}
	if e.Fingerprint != fingerprint {
		return apperr.New(apperr.ForkRequestConflict,
			"request %q was already used for a different fork (of session %q); use a new requestId", in.RequestID, e.ParentAgentSessionID)
	}
	if e.State != forkjournal.StatePending && e.State != forkjournal.StateForked {
		return nil
	}
	// Not final: a thread an attempt that timed out may yet make is found
	// by a later settle (the entry stays pending).
	if err := s.settle(ctx, e, settleMode{}); err != nil {
		return apperr.Wrap(err, apperr.ForkPersistenceFailed,
			"an earlier attempt of request %q did not finish and its provider thread could not be settled yet; try again shortly", in.RequestID)
	}
	return nil
}

// settleMode says what a settle may assume.
type settleMode struct {
	// final: no Codex that had the request lives (it died, or long enough
	// has passed), so an attempt with no thread found made none.
	final bool
	// busySince, when set, marks a settle beside a running server (tuttid
	// orphans clean): another pending attempt of the same parent updated
	// since then may be in flight, and a thread found at the provider may
	// be its, so none is claimed.
	busySince time.Time
}

// settle ends an attempt a crash (or a lost reply) left pending or forked:
// its thread, known or found at the provider, is archived unless another
// owns it; with no thread, the attempt failed, when final; otherwise it
// stays pending, since a Codex that only answered late may still make the
// thread. It returns an error only when it could not look.
func (s *Service) settle(ctx context.Context, e *ent.ForkJournal, mode settleMode) error {
	thread := e.ChildProviderSessionID
	if thread == "" {
		found, err := s.findChild(ctx, e, mode.busySince)
		if err != nil {
			return err
		}
		if found == "" {
			if mode.final {
				s.journalSet(ctx, e, forkjournal.StateFailed, "", "no provider thread was made (checked with the provider's thread list)")
			}
			return nil
		}
		thread = found
	}
	owned, err := s.store.Client.AgentSession.Query().Where(agentsession.ProviderSessionID(thread)).Exist(ctx)
	if err != nil {
		return apperr.Storage(err, "check the fork's thread")
	}
	if owned && thread == e.ChildProviderSessionID {
		// Stored after all (the done mark is in the same transaction, so
		// this is only a journal written by an older tuttid).
		s.journalSet(ctx, e, forkjournal.StateDone, thread, "")
		return nil
	}
	archived, err := s.archive(ctx, e, thread)
	if err != nil {
		return err
	}
	if !archived {
		return nil
	}
	s.log.WarnContext(ctx, "fork journal: unfinished fork's thread archived", "request", e.RequestID,
		"workspace", e.WorkspaceID, "session", e.ParentAgentSessionID,
		"orphan_thread", thread)
	s.journalSet(ctx, e, forkjournal.StateArchived, thread, "the fork did not complete; thread archived")
	return nil
}

// owner names who holds a thread besides entry e: a session whose provider
// thread it is, or another journal entry that recorded it and is in
// flight or stored (pending, forked, done). "" when nobody does.
func (s *Service) owner(ctx context.Context, e *ent.ForkJournal, thread string) (string, error) {
	a, err := s.store.Client.AgentSession.Query().Where(agentsession.ProviderSessionID(thread)).First(ctx)
	if err == nil {
		return "session " + a.ID, nil
	}
	if !ent.IsNotFound(err) {
		return "", apperr.Storage(err, "check the thread's owner")
	}
	o, err := s.store.Client.ForkJournal.Query().
		Where(forkjournal.ChildProviderSessionID(thread), forkjournal.IDNEQ(e.ID),
			forkjournal.StateIn(forkjournal.StatePending, forkjournal.StateForked, forkjournal.StateDone)).First(ctx)
	if err == nil {
		return "fork request " + o.RequestID, nil
	}
	if !ent.IsNotFound(err) {
		return "", apperr.Storage(err, "check the thread's owner")
	}
	return "", nil
}

// archive archives entry e's thread at the provider unless a session or
// another attempt owns it: then the entry's claim was wrong, and it is
// recorded failed without the thread. Every archive of the journal goes
// through here. A failed archive leaves the entry orphaned (clean retries);
// archived says whether the thread is archived now.
func (s *Service) archive(ctx context.Context, e *ent.ForkJournal, thread string) (archived bool, err error) {
	who, err := s.owner(ctx, e, thread)
	if err != nil {
		return false, err
	}
	if who != "" {
		s.log.WarnContext(ctx, "fork journal: thread not archived, it belongs to another; the entry made none",
			"request", e.RequestID, "child_thread", thread, "owner", who)
		s.journalClear(ctx, e, fmt.Sprintf("thread %s belongs to %s, not to this attempt", thread, who))
		return false, nil
	}
	if err := s.rt.Archive(ctx, e.Provider, thread); err != nil {
		s.log.WarnContext(ctx, "fork journal: orphan thread not archived; `tuttid orphans clean` retries",
			"request", e.RequestID, "orphan_thread", thread, "err", err)
		s.journalSet(ctx, e, forkjournal.StateOrphaned, thread, "not archived: "+err.Error())
		return false, nil
	}
	return true, nil
}

// journalClear records an attempt failed with no thread of its own.
func (s *Service) journalClear(ctx context.Context, e *ent.ForkJournal, reason string) {
	if err := s.store.Client.ForkJournal.UpdateOneID(e.ID).SetState(forkjournal.StateFailed).
		SetChildProviderSessionID("").SetError(reason).SetUpdatedAt(s.now()).Exec(context.WithoutCancel(ctx)); err != nil {
		s.log.ErrorContext(ctx, "fork journal: entry not updated", "journal", e.ID, "request", e.RequestID, "err", err)
	}
}

// errSiblingInFlight: a settle beside a running server cannot tell the
// threads it found from an in-flight sibling's.
var errSiblingInFlight = errors.New("another fork of the same parent may be in flight; settled later")

// findChild asks the provider for a thread forked from the entry's parent
// since the entry was written, in the entry's cwd, that no session and no
// other entry owns. Forks of one parent in one cwd are serialized (forks
// into worktrees of their own run together, each in its own cwd), so the
// oldest such thread is this attempt's. With busySince set, another
// pending attempt of the parent updated since then may be in flight (its
// thread not recorded yet), so nothing is claimed; it is checked after the
// listing, so that any thread listed was made after that attempt's entry
// was written.
func (s *Service) findChild(ctx context.Context, e *ent.ForkJournal, busySince time.Time) (string, error) {
	finder, ok := s.rt.(agent.ThreadFinder)
	if !ok {
		return "", fmt.Errorf("the %s runtime cannot list its threads", e.Provider)
	}
	found, err := finder.FindForks(ctx, agent.FindForksInput{
		Provider: e.Provider, ParentThreadID: e.ParentProviderSessionID, Cwd: e.Cwd, CreatedAfter: e.CreatedAt,
	})
	if err != nil {
		return "", err
	}
	if len(found) > 0 && !busySince.IsZero() {
		busy, err := s.store.Client.ForkJournal.Query().
			Where(forkjournal.IDNEQ(e.ID), forkjournal.ParentProviderSessionID(e.ParentProviderSessionID),
				forkjournal.StateEQ(forkjournal.StatePending), forkjournal.ChildProviderSessionID(""),
				forkjournal.UpdatedAtGTE(busySince)).Exist(ctx)
		if err != nil {
			return "", apperr.Storage(err, "check the forks in flight")
		}
		if busy {
			return "", errSiblingInFlight
		}
	}
	for i := len(found) - 1; i >= 0; i-- { // newest first: walk from the oldest
		id := found[i].ThreadID
		owned, err := s.store.Client.AgentSession.Query().Where(agentsession.ProviderSessionID(id)).Exist(ctx)
		if err != nil {
			return "", apperr.Storage(err, "check a listed thread")
		}
		if owned {
			continue
		}
		claimed, err := s.store.Client.ForkJournal.Query().
			Where(forkjournal.ChildProviderSessionID(id), forkjournal.IDNEQ(e.ID)).Exist(ctx)
		if err != nil {
			return "", apperr.Storage(err, "check a listed thread")
		}
		if !claimed {
			return id, nil
		}
	}
	return "", nil
}

// settleLost settles an attempt whose request Codex may have acted on
// before it died or timed out, once the runtime answers again (it restarts
// within a second or so; until it notices the death, calls fail too). The
// whole settle, every provider call in it included, ends within wait (one
// deadline, not one per call): the parent's lock is held meanwhile. If it
// does not settle by then, a late reply (lateThread), Reconcile or a
// replay settles it later.
func (s *Service) settleLost(ctx context.Context, e *ent.ForkJournal, cause error, wait time.Duration) {
	// Codex died with the request: the new process cannot still make the
	// thread. A timeout leaves a live Codex that may.
	final := errors.Is(cause, agent.ErrRuntimeUnavailable)
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for {
		err := s.settle(ctx, e, settleMode{final: final})
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			s.log.WarnContext(ctx, "fork journal: lost fork not settled yet; settled by a late reply, at the next start or replay",
				"request", e.RequestID, "err", err)
			return
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// lateThread records the thread that Codex made for a fork after the fork
// gave up waiting (it timed out; the person was answered
// fork_provider_failed): an orphan, archived at once. It waits for the
// request's saga to end, and does nothing if the entry was settled since
// (with this thread found at the provider, or otherwise).
func (s *Service) lateThread(ctx context.Context, e *ent.ForkJournal, thread string) {
	defer s.lockRequest(e.WorkspaceID, e.RequestID)()
	n, err := s.store.Client.ForkJournal.Update().
		Where(forkjournal.ID(e.ID), forkjournal.StateIn(forkjournal.StatePending, forkjournal.StateFailed),
			forkjournal.ChildProviderSessionID("")).
		SetState(forkjournal.StateOrphaned).SetChildProviderSessionID(thread).
		SetError("the provider made the thread after the fork timed out").SetUpdatedAt(s.now()).Save(ctx)
	if err != nil {
		s.log.ErrorContext(ctx, "fork journal: a late fork reply's thread not recorded; `tuttid orphans` lists the entry pending",
			"request", e.RequestID, "orphan_thread", thread, "err", err)
		return
	}
	if n == 0 {
		s.log.InfoContext(ctx, "fork journal: late fork reply for an entry already settled", "request", e.RequestID, "orphan_thread", thread)
		return
	}
	s.log.WarnContext(ctx, "fork journal: a fork that timed out made its thread after all; archiving it",
		"request", e.RequestID, "workspace", e.WorkspaceID, "session", e.ParentAgentSessionID, "orphan_thread", thread)
	cur := *e
	cur.State, cur.ChildProviderSessionID = forkjournal.StateOrphaned, thread
	s.archiveOrphan(ctx, &cur, thread, "the provider made the thread after the fork timed out")
}

// Reconcile settles the attempts the previous run left unfinished. It runs
// at start, before requests are served; one it cannot settle (Codex down)
// stays as it is, for the next start or a replay.
func (s *Service) Reconcile(ctx context.Context) error {
	entries, err := s.store.Client.ForkJournal.Query().
		Where(forkjournal.StateIn(forkjournal.StatePending, forkjournal.StateForked),
			// Another instance's entries are its Codex's: it settles them.
			forkjournal.InstanceID(s.instanceID)).
		Order(ent.Asc(forkjournal.FieldID)).All(ctx)
	if err != nil {
		return apperr.Storage(err, "read the fork journal")
	}
	var unsettled int
	var settled []*ent.ForkJournal
	for _, e := range entries {
		// Final: the previous run's Codex died with it.
		if err := s.settle(ctx, e, settleMode{final: true}); err != nil {
			if apperr.CodeOf(err) == apperr.StorageUnavailable {
				return err
			}
			unsettled++
			s.log.WarnContext(ctx, "fork journal: unfinished fork not settled", "request", e.RequestID, "err", err)
			continue
		}
		settled = append(settled, e)
	}
	if len(entries) > 0 {
		s.log.WarnContext(ctx, "fork journal: settled the forks the previous run left unfinished",
			"entries", len(entries), "unsettled", unsettled)
	}
	// Their worktrees and refs go too: no saga of the previous run goes on.
	if err := s.reconcileRefs(ctx, settled); err != nil {
		return err
	}
	return s.reconcileWorktrees(ctx, time.Time{})
}

// archiveOrphan archives the thread of an attempt whose child could not be
// stored, at once: the server's own Codex holds the thread open, and no
// other Codex process (tuttid orphans clean) can archive it while it does
// ("already has an active writer", verified on 0.169.0). The entry stays
// orphaned, for clean, if the archive fails. It says whether the thread is
// archived.
func (s *Service) archiveOrphan(ctx context.Context, e *ent.ForkJournal, thread, reason string) bool {
	archived, err := s.archive(ctx, e, thread)
	if err != nil {
		s.log.WarnContext(ctx, "fork journal: orphan thread not archived; `tuttid orphans clean` retries",
			"request", e.RequestID, "orphan_thread", thread, "err", err)
		return false
	}
	if archived {
		s.journalSet(ctx, e, forkjournal.StateArchived, thread, reason+"; thread archived")
	}
	return archived
}

// updatedOne is the error of the update of journal entry id that returned
// n rows and err: a missing entry is an error, as with ent's UpdateOne, which
// the journal's updates avoid (it reads the row back in a transaction of
// its own: five round trips on PostgreSQL).
func updatedOne(id, n int, err error) error {
	if err == nil && n == 0 {
		err = fmt.Errorf("fork journal entry %d: %w", id, &ent.NotFoundError{})
	}
	return err
}
