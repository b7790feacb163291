package fork

import (
	"context"
	"errors"
	"strings"
	"time"

	"tuttid/agent"
	"tuttid/apperr"
	"tuttid/codebranch"
	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/ent/forkjournal"
	"tuttid/ent/sessionfork"
	"tuttid/ent/turn"
	"tuttid/session"
	"tuttid/validate"
)

// Fork runs the saga: the design's Service Flow, in its order.
func (s *Service) Fork(ctx context.Context, in Input) (*Result, error) {
	in, err := normalize(in)
	if err != nil {
		return nil, err
	}
	fingerprint := in.fingerprint()
	// Two requests with one id run one after the other, so that the second
	// replays the first's result instead of forking again.
	defer s.lockRequest(in.WorkspaceID, in.RequestID)()
	if res, err := s.replay(ctx, in, fingerprint); res != nil || err != nil {
		return res, err
	}
	// Sends to the parent wait for the fork (and the fork for them), so a
	// turn cannot start between the idle check and the provider's fork.
	defer s.lockParent(in)()
	// An earlier attempt is settled under the parent's lock: no other fork
	// of the parent in its cwd is in flight then, so a thread the settle
	// finds at the provider cannot be a sibling's that its journal has not
	// recorded yet.
	if err := s.priorAttempt(ctx, in, fingerprint); err != nil {
		return nil, err
	}
	parent, err := s.checkParent(ctx, in)
	if err != nil {
		return nil, err
	}
	// Before the journal and before anything else of the parent: a fork
	// Codex cannot run fails at once and leaves nothing behind.
	if err := s.accounts.CheckSignedIn(ctx, "fork the session"); err != nil {
		return nil, err
	}
	// The cwd is checked again now (it was when the parent was made), and
	// its real path is what Codex, the journal and the child get.
	if parent.Cwd, err = s.sessions.SessionCwd(ctx, parent); err != nil {
		return nil, err
	}
	childID, err := s.childID(ctx, in)
	if err != nil {
		return nil, err
	}
	// The title the parent is shown with is both the base of the child's
	// default title and what the child remembers of its parent.
	parentTitle, err := s.reads.DisplayTitle(ctx, parent)
	if err != nil {
		return nil, err
	}
	// A default title is chosen again, under its lock, when the child is
	// stored; the provider is told the one it would be now.
	title := ""
	if in.Title != nil {
		title = *in.Title
	} else if title, err = nextTitle(ctx, s.store.Client, parent, parentTitle); err != nil {
		return nil, err
	}
	settings, err := in.Settings.Apply(parent.Settings)
	if err != nil {
		return nil, err
	}
	if err := s.accounts.CheckModelSettings(ctx, settings); err != nil {
		return nil, err
	}
	visible := in.Visible == nil || *in.Visible
	// The child's code is checked before anything is written (code.go).
	code, err := s.planCode(ctx, in, parent, childID)
	if err != nil {
		return nil, err
	}
	defer code.Release()
	committed := false

	// From here on the caller going away (a client that disconnects) must
	// not cut the saga short: once Codex got the request it may create the
	// thread, and only running to the end stores it (and lets a retry with
	// the same requestId replay it) instead of leaving an orphan nobody
	// logged. The runtime bounds each call.
	ctx = context.WithoutCancel(ctx)
	// The journal entry is durable before Codex hears of the request.
	entry, err := s.journalStart(ctx, in, fingerprint, parent, childID)
	if err != nil {
		return nil, err
	}
	s.crashPoint(CrashBeforeProvider)
	if err := s.makeCode(ctx, entry, code); err != nil {
		s.journalSet(ctx, entry, forkjournal.StateFailed, "", err.Error())
		return nil, err
	}
	// Undone on every failure from here: no worktree is left behind.
	defer func() {
		if !committed {
			s.dropCode(ctx, code)
		}
	}()
	cwd := parent.Cwd
	if code != nil {
		cwd = code.Cwd
		if code.Mode == codebranch.ModeWorktree {
			s.crashPoint(CrashWorktreeMade)
		}
	}
	asked := time.Now()
	rf, err := s.providerFork(ctx, parent, agent.RuntimeForkInput{
		WorkspaceID: in.WorkspaceID, ParentSessionID: parent.ID, ChildSessionID: childID,
		Provider: parent.Provider, ParentThreadID: parent.ProviderSessionID, Cwd: cwd,
		Settings: settings, ModelProvider: session.ModelProviderOf(parent),
		LastTurnID: in.LastTurnID, Title: title, Visible: &visible,
		HistoryBytesHint: s.historyBytes(ctx, parent.ID),
		// A reply after a timeout names the thread Codex made after all.
		OnLateThread: func(thread string) { s.lateThread(ctx, entry, thread) },
	})
	if err != nil {
		if errors.Is(err, agent.ErrRequestLost) {
			// Codex may have made the thread: find it (and archive it) once
			// the runtime is back, or leave the entry for Reconcile.
			s.settleLost(ctx, entry, err, s.lostWait)
		} else {
			s.journalSet(ctx, entry, forkjournal.StateFailed, "", err.Error())
		}
		return nil, providerErr(err, in)
	}
	if rf.History != nil {
		// Stored (or dropped) by persist; closed here on every path.
		defer rf.History.Close()
	}
	if rf.Session.ThreadID == "" {
		s.journalSet(ctx, entry, forkjournal.StateFailed, "", "the provider's fork returned no thread id")
		return nil, apperr.New(apperr.ForkProviderFailed, "the provider's fork returned no thread id")
	}
	s.journalSet(ctx, entry, forkjournal.StateForked, rf.Session.ThreadID, "")
	if rf.Session.Cwd == "" {
		rf.Session.Cwd = cwd // the child works where Codex was told to
	}
	s.crashPoint(CrashProviderAnswered)

	answered := time.Now()
	child, row, staged, err := s.persist(ctx, persistInput{
		in: in, fingerprint: fingerprint, parent: parent, parentTitle: parentTitle, childID: childID, title: title,
		settings: settings, visible: visible, rf: rf, journalID: entry.ID, code: code,
	})
	if err != nil {
		reason := "the child could not be stored: " + err.Error()
		s.journalSet(ctx, entry, forkjournal.StateOrphaned, rf.Session.ThreadID, reason)
		archived := s.archiveOrphan(ctx, entry, rf.Session.ThreadID, reason)
		return nil, s.notStored(ctx, in, parent, childID, rf.Session.ThreadID, archived, err)
	}
	committed = true
	s.crashPoint(CrashCommitted)

	// Published only now: subscribers may read the child back at once.
	s.sessions.Announce(ctx, staged)
	s.log.InfoContext(ctx, "session forked", "workspace", in.WorkspaceID, "session", parent.ID, "request", in.RequestID,
		"turn", in.LastTurnID, "child_session", child.ID, "child_thread", child.ProviderSessionID,
		"message_source", child.RuntimeContext[session.CtxForkMessageSource],
		// Where a slow fork spent its time: waiting on the provider, or storing.
		"provider_ms", answered.Sub(asked).Milliseconds(), "store_ms", time.Since(answered).Milliseconds())
	return &Result{Session: child, Fork: row}, nil
}

// notStored reports a child the provider created but tuttid could not
// store. The log says what happened to the thread: archived at once, or
// left an orphan for `tuttid orphans clean`, with what cleanup needs.
func (s *Service) notStored(ctx context.Context, in Input, parent *ent.AgentSession, childID, thread string, archived bool, err error) error {
	what := "fork: provider thread created but the child not stored"
	var spool spoolError
	if errors.As(err, &spool) {
		what = "fork: the child's history could not be spooled to local disk (" + s.spoolPlace() + "); provider thread created but the child not stored"
	}
	// The thread keeps its log key (orphan_thread) either way; the message
	// says whether it is archived.
	fate := "; thread archived"
	if !archived {
		fate = "; thread not archived (orphan, listed by tuttid orphans)"
	}
	s.log.ErrorContext(ctx, what+fate,
		"orphan_thread", thread, "workspace", in.WorkspaceID, "session", parent.ID,
		"thread", parent.ProviderSessionID, "child_session", childID, "request", in.RequestID,
		"turn", in.LastTurnID, "err", err)
	switch {
	case errors.Is(err, errChildIDTaken):
		return apperr.Wrap(err, apperr.ForkTargetConflict, "session %q already exists", childID)
	case errors.As(err, &spool):
		return apperr.Wrap(err, apperr.StorageUnavailable,
			"the provider forked the session (thread %s) but tuttid could not spool its history to local disk (%s); nothing was created", thread, s.spoolPlace())
	}
	return apperr.Wrap(err, apperr.ForkPersistenceFailed,
		"the provider forked the session (thread %s) but tuttid could not store the child; nothing was created", thread)
}

func normalize(in Input) (Input, error) {
	in.WorkspaceID = strings.TrimSpace(in.WorkspaceID)
	in.ParentSessionID = strings.TrimSpace(in.ParentSessionID)
	in.RequestID = strings.TrimSpace(in.RequestID)
	in.ChildSessionID = strings.TrimSpace(in.ChildSessionID)
	in.LastTurnID = strings.TrimSpace(in.LastTurnID)
	checks := []struct{ what, id string }{
		{"workspaceId", in.WorkspaceID}, {"agentSessionId", in.ParentSessionID}, {"requestId", in.RequestID},
	}
	for _, c := range checks {
		if err := validate.ID(c.what, c.id); err != nil {
			return in, err
		}
	}
	for _, c := range []struct{ what, id string }{{"targetAgentSessionId", in.ChildSessionID}, {"lastTurnId", in.LastTurnID}} {
		if c.id != "" {
			if err := validate.ID(c.what, c.id); err != nil {
				return in, err
			}
		}
	}
	if in.ChildSessionID != "" && in.ChildSessionID == in.ParentSessionID {
		return in, apperr.New(apperr.ForkTargetConflict, "the child cannot have the parent's id %q", in.ChildSessionID)
	}
	title, err := explicitTitle(in.Title)
	if err != nil {
		return in, err
	}
	in.Title = title
	if in.Code, err = normalizeCode(in.Code); err != nil {
		return in, err
	}
	if in.Settings.Model != nil {
		m := strings.TrimSpace(*in.Settings.Model)
		in.Settings.Model = &m
	}
	if _, err := in.Settings.Apply(agent.ComposerSettings{}); err != nil {
		return in, err
	}
	return in, nil
}

// replay returns the result of a completed request with the same id, or
// agent.fork_request_conflict when its parameters differ.
func (s *Service) replay(ctx context.Context, in Input, fingerprint string) (*Result, error) {
	row, err := s.store.Client.SessionFork.Query().
		Where(sessionfork.WorkspaceID(in.WorkspaceID), sessionfork.ForkRequestID(in.RequestID)).
		WithChild().Only(ctx)
	if ent.IsNotFound(err) {
		return s.replayDeleted(ctx, in, fingerprint)
	}
	if err != nil {
		return nil, apperr.Storage(err, "read the fork request")
	}
	if row.ForkRequestFingerprint != fingerprint {
		return nil, apperr.New(apperr.ForkRequestConflict,
			"request %q was already used for a different fork (of session %q); use a new requestId", in.RequestID, row.ParentAgentSessionID)
	}
	child := row.Edges.Child
	row.Edges = ent.SessionForkEdges{}
	return &Result{Session: child, Fork: row, Replayed: true}, nil
}

// replayDeleted answers a request whose lineage row is gone: the journal
// entry marked done with the child outlives the child's deletion (the
// lineage row cascades away with it), so a replay says the child was
// deleted instead of forking a second one.
func (s *Service) replayDeleted(ctx context.Context, in Input, fingerprint string) (*Result, error) {
	e, err := s.store.Client.ForkJournal.Query().
		Where(forkjournal.WorkspaceID(in.WorkspaceID), forkjournal.RequestID(in.RequestID), forkjournal.StateEQ(forkjournal.StateDone)).
		Order(ent.Desc(forkjournal.FieldID)).First(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, apperr.Storage(err, "read the fork journal")
	}
	if e.Fingerprint != fingerprint {
		return nil, apperr.New(apperr.ForkRequestConflict,
			"request %q was already used for a different fork (of session %q); use a new requestId", in.RequestID, e.ParentAgentSessionID)
	}
	return nil, apperr.New(apperr.SessionNotFound,
		"request %q already forked session %q into session %q, which has since been deleted; use a new requestId to fork again",
		in.RequestID, e.ParentAgentSessionID, e.ChildAgentSessionID)
}

// checkParent loads the parent and refuses what cannot be forked: another
// provider, no thread, a turn running, a boundary turn that did not
// complete. All before the provider is called, so a refusal costs nothing.
func (s *Service) checkParent(ctx context.Context, in Input) (*ent.AgentSession, error) {
	parent, err := s.sessions.Session(ctx, in.WorkspaceID, in.ParentSessionID)
	if err != nil {
		return nil, err
	}
	if parent == nil {
		return nil, apperr.New(apperr.ForkParentNotFound, "session %q does not exist in workspace %q", in.ParentSessionID, in.WorkspaceID)
	}
	if parent.Provider != agent.ProviderCodex {
		return nil, apperr.New(apperr.ForkUnsupportedProvider, "sessions of provider %q cannot be forked; only %q sessions can", parent.Provider, agent.ProviderCodex)
	}
	if parent.ProviderSessionID == "" {
		return nil, apperr.New(apperr.ForkProviderSessionMissing, "session %q has no provider thread to fork", parent.ID)
	}
	idle, running, err := s.reads.Idle(ctx, parent)
	if err != nil {
		return nil, err
	}
	// The named turn is checked first so that a client forking from a
	// running turn is told exactly that.
	if in.LastTurnID != "" {
		t, err := s.reads.Turn(ctx, parent.ID, in.LastTurnID)
		if err != nil {
			return nil, err
		}
		if t == nil {
			return nil, apperr.New(apperr.ForkTurnNotFound, "turn %q does not exist in session %q", in.LastTurnID, parent.ID)
		}
		if t.Status == turn.StatusIN_PROGRESS {
			return nil, apperr.New(apperr.ForkTurnInProgress, "turn %q is still in progress; fork from it once it completes", in.LastTurnID)
		}
		// "Fork from here" is for completed turns: the fallback copy keeps
		// only those, so a boundary on any other would give two histories.
		if t.Status != turn.StatusCOMPLETED {
			return nil, apperr.New(apperr.ForkTurnNotFound, "turn %q ended %s; only a completed turn can be forked from", in.LastTurnID, t.Status)
		}
	}
	if !idle {
		return nil, apperr.New(apperr.ForkSessionNotIdle, "session %q is not idle (%s, turn in progress: %t); fork it once it is", parent.ID, parent.Status, running)
	}
	return parent, nil
}

// childID is the requested id when it is free, else a new one.
func (s *Service) childID(ctx context.Context, in Input) (string, error) {
	if in.ChildSessionID == "" {
		return s.newID(), nil
	}
	taken, err := s.store.Client.AgentSession.Query().Where(agentsession.ID(in.ChildSessionID)).Exist(ctx)
	if err != nil {
		return "", apperr.Storage(err, "check the target session id")
	}
	if taken {
		return "", apperr.New(apperr.ForkTargetConflict, "session %q already exists; choose another targetAgentSessionId or omit it", in.ChildSessionID)
	}
	return in.ChildSessionID, nil
}

// providerErr maps a failure of the provider's fork: the refusals that
// have fork codes get them; the rest (unavailable, timed out, bad
// settings) is mapped as every runtime call is.
func providerErr(err error, in Input) error {
	switch {
	case errors.Is(err, agent.ErrRequestLost):
		// Codex got the request and died or did not answer: a provider
		// failure, not an unavailable runtime (which never got it).
		return apperr.Wrap(err, apperr.ForkProviderFailed, "the provider failed while forking the session (no child was created)")
	case errors.Is(err, agent.ErrUnsupportedProvider):
		return apperr.Wrap(err, apperr.ForkUnsupportedProvider, "the provider has no fork")
	case errors.Is(err, agent.ErrTurnNotFound):
		return apperr.Wrap(err, apperr.ForkTurnNotFound, "the provider has no turn %q", in.LastTurnID)
	case errors.Is(err, agent.ErrTurnInProgress):
		return apperr.Wrap(err, apperr.ForkTurnInProgress, "turn %q is still in progress", in.LastTurnID)
	}
	e := session.RuntimeError(err, "fork the session")
	if e.Code == apperr.ProviderFailed {
		e.Code = apperr.ForkProviderFailed
	}
	return e
}

// providerFork calls the runtime's Fork. A parent that never ran a turn has
// no stored history at the provider (Codex writes a thread's rollout with
// its first turn, and forking it answers "no rollout found"); its fork is
// a new thread with the same settings, which is all the parent holds.
func (s *Service) providerFork(ctx context.Context, parent *ent.AgentSession, in agent.RuntimeForkInput) (agent.RuntimeForkResult, error) {
	rf, err := s.rt.Fork(ctx, in)
	if err == nil || !errors.Is(err, agent.ErrThreadNotFound) || in.LastTurnID != "" {
		return rf, err
	}
	hasTurns, qerr := s.store.Client.Turn.Query().Where(turn.AgentSessionID(parent.ID)).Exist(ctx)
	if qerr != nil || hasTurns {
		return rf, err
	}
	rs, serr := s.rt.Start(ctx, agent.StartInput{Provider: in.Provider, Cwd: in.Cwd, Settings: in.Settings, ModelProvider: in.ModelProvider})
	if serr != nil {
		return agent.RuntimeForkResult{}, serr
	}
	s.log.InfoContext(ctx, "fork of a session without turns: started a new provider thread",
		"workspace", parent.WorkspaceID, "session", parent.ID, "child_thread", rs.ThreadID)
	return agent.RuntimeForkResult{
		Session: rs, EmptyParent: true,
		Fork: agent.RuntimeForkLineage{
			ParentThreadID: in.ParentThreadID, ChildThreadID: rs.ThreadID,
			Provider: in.Provider, ForkedAt: s.now(),
		},
	}, nil
}

// lockParent holds the parent against sends for the fork. Forks into a
// worktree of their own share it (an exploration forks its branches at
// once): Codex lists each one's thread under its own cwd, so a settle
// cannot take a sibling's thread for its own. Any other fork holds the
// parent alone.
func (s *Service) lockParent(in Input) (unlock func()) {
	if in.Code != nil && in.Code.Worktree {
		return s.sessions.ShareSession(in.ParentSessionID)
	}
	return s.sessions.LockSession(in.ParentSessionID)
}
