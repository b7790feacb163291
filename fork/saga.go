package fork

import (
	"context"
	"errors"
	"strings"

	"tuttid/activity"
	"tuttid/agent"
	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/ent/forkjournal"
	"tuttid/ent/sessionfork"
	"tuttid/ent/turn"
	"tuttid/session"
)

// Fork runs the saga. Its steps are numbered as in the design.
func (s *Service) Fork(ctx context.Context, in Input) (*Result, error) {
	// 1. Normalize and validate.
	in, err := normalize(in)
	if err != nil {
		return nil, err
	}
	fingerprint := in.fingerprint()
	// Two requests with one id run one after the other, so the second sees
	// the first's result; forks of one parent (and sends to it) likewise, so
	// that numbering and the idle check are not raced.
	defer s.sessions.Lock("fork-request\x00" + in.WorkspaceID + "\x00" + in.RequestID)()

	// 2. Replay a completed request.
	if res, err := s.replay(ctx, in, fingerprint); res != nil || err != nil {
		return res, err
	}
	if err := s.priorAttempt(ctx, in, fingerprint); err != nil {
		return nil, err
	}
	defer s.sessions.Lock(in.SourceAgentSessionID)()

	// 3-6. The parent, its provider, its thread, idleness, the boundary.
	parent, err := s.checkParent(ctx, in)
	if err != nil {
		return nil, err
	}
	// 7. The child's id.
	childID, err := s.childID(ctx, in)
	if err != nil {
		return nil, err
	}
	// 8. The child's title, from the title its parent is shown with (which
	// the child also caches).
	parentTitle, err := s.sessions.DisplayTitle(ctx, parent)
	if err != nil {
		return nil, err
	}
	title, releaseTitle, err := s.title(ctx, parent, parentTitle, in.Title)
	if err != nil {
		return nil, err
	}
	defer releaseTitle()
	// 9. Effective settings and cwd.
	settings, err := in.Settings.Apply(parent.Settings)
	if err != nil {
		return nil, err
	}
	visible := in.Visible == nil || *in.Visible

	// 10. The provider fork. From here on the caller going away (a client
	// that disconnects) must not cut the saga short: once Codex got the
	// request it may create the thread, and only running to the end stores
	// it (and lets a retry with the same requestId replay it) instead of
	// leaving an orphan nobody logged. The runtime bounds each call.
	ctx = context.WithoutCancel(ctx)
	// The journal entry is durable before Codex hears of the request.
	entry, err := s.journalStart(ctx, in, fingerprint, parent, childID)
	if err != nil {
		return nil, err
	}
	s.crashPoint(CrashBeforeProvider)
	rf, err := s.providerFork(ctx, parent, agent.RuntimeForkInput{
		WorkspaceID: in.WorkspaceID, SourceAgentSessionID: parent.ID, TargetAgentSessionID: childID,
		Provider: parent.Provider, SourceProviderSessionID: parent.ProviderSessionID, Cwd: parent.Cwd,
		Settings: settings, ModelProvider: session.ModelProviderOf(parent),
		LastTurnID: in.LastTurnID, Title: title, Visible: &visible,
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
	if rf.Session.ProviderSessionID == "" {
		s.journalSet(ctx, entry, forkjournal.StateFailed, "", "the provider's fork returned no thread id")
		return nil, apperr.New(apperr.ForkProviderFailed, "the provider's fork returned no thread id")
	}
	s.journalSet(ctx, entry, forkjournal.StateForked, rf.Session.ProviderSessionID, "")
	s.crashPoint(CrashProviderAnswered)

	// 11-13. Child session, lineage and history in one transaction.
	child, row, err := s.persist(ctx, persistInput{
		in: in, fingerprint: fingerprint, parent: parent, parentTitle: parentTitle, childID: childID, title: title,
		settings: settings, visible: visible, rf: rf, journalID: entry.ID,
	})
	if err != nil {
		reason := "the child could not be stored: " + err.Error()
		s.journalSet(ctx, entry, forkjournal.StateOrphaned, rf.Session.ProviderSessionID, reason)
		s.archiveOrphan(ctx, entry, rf.Session.ProviderSessionID, reason)
		// The provider thread exists but tuttid does not know it: leave a
		// trail for cleanup and report the failure.
		s.log.ErrorContext(ctx, "fork: provider thread created but not stored (orphan)",
			"orphan_provider_session_id", rf.Session.ProviderSessionID,
			"workspace_id", in.WorkspaceID, "parent_agent_session_id", parent.ID,
			"parent_provider_session_id", parent.ProviderSessionID,
			"target_agent_session_id", childID, "request_id", in.RequestID,
			"last_turn_id", in.LastTurnID, "err", err)
		if errors.Is(err, errTargetTaken) {
			return nil, apperr.Wrap(err, apperr.ForkTargetConflict, "session %q already exists", childID)
		}
		return nil, apperr.Wrap(err, apperr.ForkPersistenceFailed,
			"the provider forked the session (thread %s) but tuttid could not store the child; nothing was created", rf.Session.ProviderSessionID)
	}

	s.crashPoint(CrashCommitted)

	// 14. Publish.
	s.publish(ctx, activity.Event{Kind: activity.SessionCreated, WorkspaceID: in.WorkspaceID, AgentSessionID: child.ID, Session: child})
	s.publish(ctx, activity.Event{Kind: activity.SessionForked, WorkspaceID: in.WorkspaceID, AgentSessionID: parent.ID, Session: child, Fork: row})
	s.log.InfoContext(ctx, "session forked", "workspace_id", in.WorkspaceID, "parent_agent_session_id", parent.ID,
		"child_agent_session_id", child.ID, "child_provider_session_id", child.ProviderSessionID,
		"last_turn_id", in.LastTurnID, "message_source", child.RuntimeContext["forkMessageSource"])

	// 15. Return the child and its lineage.
	return &Result{Session: child, Fork: row}, nil
}

func normalize(in Input) (Input, error) {
	in.WorkspaceID = strings.TrimSpace(in.WorkspaceID)
	in.SourceAgentSessionID = strings.TrimSpace(in.SourceAgentSessionID)
	in.RequestID = strings.TrimSpace(in.RequestID)
	in.TargetAgentSessionID = strings.TrimSpace(in.TargetAgentSessionID)
	in.LastTurnID = strings.TrimSpace(in.LastTurnID)
	checks := []struct{ what, id string }{
		{"workspaceId", in.WorkspaceID}, {"agentSessionId", in.SourceAgentSessionID}, {"requestId", in.RequestID},
	}
	for _, c := range checks {
		if err := session.CheckID(c.what, c.id); err != nil {
			return in, err
		}
	}
	for _, c := range []struct{ what, id string }{{"targetAgentSessionId", in.TargetAgentSessionID}, {"lastTurnId", in.LastTurnID}} {
		if c.id != "" {
			if err := session.CheckID(c.what, c.id); err != nil {
				return in, err
			}
		}
	}
	if in.TargetAgentSessionID != "" && in.TargetAgentSessionID == in.SourceAgentSessionID {
		return in, apperr.New(apperr.ForkTargetConflict, "the child cannot have the parent's id %q", in.TargetAgentSessionID)
	}
	title, err := explicitTitle(in.Title)
	if err != nil {
		return in, err
	}
	in.Title = title
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
		return nil, nil
	}
	if err != nil {
		return nil, storageErr(err, "read the fork request")
	}
	if row.ForkRequestFingerprint != fingerprint {
		return nil, apperr.New(apperr.ForkRequestConflict,
			"request %q was already used for a different fork (of session %q); use a new requestId", in.RequestID, row.ParentAgentSessionID)
	}
	child := row.Edges.Child
	row.Edges = ent.SessionForkEdges{}
	return &Result{Session: child, Fork: row, Replayed: true}, nil
}

// checkParent runs steps 3 to 6.
func (s *Service) checkParent(ctx context.Context, in Input) (*ent.AgentSession, error) {
	parent, err := s.store.Client.AgentSession.Query().
		Where(agentsession.ID(in.SourceAgentSessionID), agentsession.WorkspaceID(in.WorkspaceID)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, apperr.New(apperr.ForkParentNotFound, "session %q does not exist in workspace %q", in.SourceAgentSessionID, in.WorkspaceID)
	}
	if err != nil {
		return nil, storageErr(err, "read the parent session")
	}
	if parent.Provider != agent.ProviderCodex {
		return nil, apperr.New(apperr.ForkUnsupportedProvider, "sessions of provider %q cannot be forked; only %q sessions can", parent.Provider, agent.ProviderCodex)
	}
	if parent.ProviderSessionID == "" {
		return nil, apperr.New(apperr.ForkProviderSessionMissing, "session %q has no provider thread to fork", parent.ID)
	}
	running, err := s.sessions.HasRunningTurn(ctx, parent.ID)
	if err != nil {
		return nil, err
	}
	// The named turn is checked first so that a client forking from a
	// running turn is told exactly that.
	if in.LastTurnID != "" {
		t, err := s.store.Client.Turn.Query().
			Where(turn.AgentSessionID(parent.ID), turn.TurnID(in.LastTurnID)).Only(ctx)
		if ent.IsNotFound(err) {
			return nil, apperr.New(apperr.ForkTurnNotFound, "turn %q does not exist in session %q", in.LastTurnID, parent.ID)
		}
		if err != nil {
			return nil, storageErr(err, "read the fork turn")
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
	idle := parent.Status == agentsession.StatusREADY || parent.Status == agentsession.StatusCOMPLETED
	if !idle || running {
		return nil, apperr.New(apperr.ForkSessionNotIdle, "session %q is not idle (%s, turn in progress: %t); fork it once it is", parent.ID, parent.Status, running)
	}
	return parent, nil
}

// childID runs step 7.
func (s *Service) childID(ctx context.Context, in Input) (string, error) {
	if in.TargetAgentSessionID == "" {
		return s.newID(), nil
	}
	taken, err := s.store.Client.AgentSession.Query().Where(agentsession.ID(in.TargetAgentSessionID)).Exist(ctx)
	if err != nil {
		return "", storageErr(err, "check the target session id")
	}
	if taken {
		return "", apperr.New(apperr.ForkTargetConflict, "session %q already exists; choose another targetAgentSessionId or omit it", in.TargetAgentSessionID)
	}
	return in.TargetAgentSessionID, nil
}

// providerErr maps a runtime failure of step 10 to the spec's codes.
func providerErr(err error, in Input) error {
	switch {
	case errors.Is(err, agent.ErrRequestLost):
		// Codex got the request and died or did not answer: a provider
		// failure, not an unavailable runtime (which never got it).
		return apperr.Wrap(err, apperr.ForkProviderFailed, "the provider failed while forking the session (no child was created)")
	case errors.Is(err, agent.ErrUnsupportedProvider):
		return apperr.Wrap(err, apperr.ForkUnsupportedProvider, "the provider has no fork")
	case errors.Is(err, agent.ErrRuntimeUnavailable):
		return apperr.Wrap(err, apperr.RuntimeUnavailable, "the agent runtime is unavailable; try again shortly")
	case errors.Is(err, agent.ErrInvalidSettings):
		return apperr.Wrap(err, apperr.InvalidInput, "settings: %v", err)
	case errors.Is(err, agent.ErrTurnNotFound):
		return apperr.Wrap(err, apperr.ForkTurnNotFound, "the provider has no turn %q", in.LastTurnID)
	case errors.Is(err, agent.ErrTurnInProgress):
		return apperr.Wrap(err, apperr.ForkTurnInProgress, "turn %q is still in progress", in.LastTurnID)
	default:
		return apperr.Wrap(err, apperr.ForkProviderFailed, "the provider could not fork the session")
	}
}

func storageErr(err error, what string) error { return apperr.Storage(err, what) }

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
		"parent_agent_session_id", parent.ID, "child_provider_session_id", rs.ProviderSessionID)
	return agent.RuntimeForkResult{
		Session: rs, HistoryAvailable: true, Turns: []agent.RuntimeTurn{}, EmptyParent: true,
		Fork: agent.RuntimeForkLineage{
			SourceProviderSessionID: in.SourceProviderSessionID, TargetProviderSessionID: rs.ProviderSessionID,
			Provider: in.Provider, ForkedAt: s.now(),
		},
	}, nil
}
