package session

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"tuttid/activity"
	"tuttid/agent"
	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/ent/turn"
	"tuttid/validate"
)

// StartInput creates a session; nil fields take the defaults.
type StartInput struct {
	WorkspaceID string
	Title       *string
	Cwd         *string
	Settings    SettingsOverride
	Visible     *bool
}

// Start creates a session and its provider thread.
func (s *Service) Start(ctx context.Context, in StartInput) (*ent.AgentSession, error) {
	w, err := s.read.RequireWorkspace(ctx, in.WorkspaceID)
	if err != nil {
		return nil, err
	}
	title := ""
	if in.Title != nil {
		title = strings.TrimSpace(*in.Title)
		if err := validate.Line("title", title, validate.MaxTitleLen); err != nil {
			return nil, err
		}
	}
	var given string
	if in.Cwd != nil {
		given = *in.Cwd
	}
	cwd, err := ResolveCwd(w.RootPath, given)
	if err != nil {
		return nil, err
	}
	settings, err := in.Settings.Apply(agent.ComposerSettings{PermissionModeID: agent.PermissionWorkspaceWrite})
	if err != nil {
		return nil, err
	}
	if err := s.accounts.CheckModelSettings(ctx, settings); err != nil {
		return nil, err
	}
	if err := s.accounts.CheckSignedIn(ctx, "start the session"); err != nil {
		return nil, err
	}
	visible := in.Visible == nil || *in.Visible

	rs, err := s.rt.Start(ctx, agent.StartInput{Provider: agent.ProviderCodex, Cwd: cwd, Settings: settings})
	if err != nil {
		return nil, RuntimeError(err, "start the session")
	}
	var a *ent.AgentSession
	created, err := s.changes.change(ctx, func(c *ent.Client) ([]activity.Event, error) {
		var err error
		a, err = CreateRecord(ctx, c, NewSession{
			ID: s.newID(), WorkspaceID: w.ID, Provider: agent.ProviderCodex, ThreadID: rs.ThreadID, InstanceID: s.instanceID,
			Title: title, Cwd: cwd, Status: agentsession.StatusREADY, Visible: visible, Settings: settings,
			RuntimeContext: WithThreadMetadata(nil, rs), At: s.now(),
		})
		if err != nil {
			return nil, err
		}
		return []activity.Event{createdEvent(a)}, nil
	})
	if err != nil {
		s.log.ErrorContext(ctx, "session start: provider thread created but not stored",
			"orphan_thread", rs.ThreadID, "workspace", w.ID, "err", err)
		return nil, apperr.Storage(err, "store the new session")
	}
	if s.changes.outbox != nil {
		a = a.Unwrap() // the transaction's: the caller may query through it
	}
	if s.code != nil {
		s.code.SessionStarted(ctx, a)
	}
	s.Announce(ctx, created)
	return a, nil
}

// Send starts a turn with the user's text and returns it at once.
func (s *Service) Send(ctx context.Context, workspaceID, sessionID, text string) (*ent.Turn, error) {
	if strings.TrimSpace(text) == "" {
		return nil, apperr.New(apperr.InvalidInput, "text is required")
	}
	if err := validate.Message("text", text, validate.MaxMessageLen); err != nil {
		return nil, err
	}
	a, err := s.read.RequireSession(ctx, workspaceID, sessionID)
	if err != nil {
		return nil, err
	}
	if err := s.accounts.CheckSignedIn(ctx, "start the turn"); err != nil {
		return nil, err
	}
	// The stored cwd was checked when the session started; a directory in
	// it may have become a symlink out of the root since: check the real
	// path now, and give Codex that path.
	cwd, err := s.SessionCwd(ctx, a)
	if err != nil {
		return nil, err
	}
	// Claim the session before calling the provider, so that two sends
	// cannot both see it idle; the lock waits out a fork of it in progress.
	// WORKING is published here, before any event of the turn can exist,
	// so that subscribers never see it after the turn's own events, and
	// under the state lock, so never before the previous turn's READY.
	unlock := s.LockSession(a.ID)
	unlockState := s.lockState(a.ID)
	var claimed int
	err = s.changes.commit(ctx, func(c *ent.Client) ([]activity.Event, error) {
		var err error
		claimed, err = c.AgentSession.Update().
			Where(agentsession.ID(a.ID), agentsession.StatusNEQ(agentsession.StatusWORKING)).
			SetStatus(agentsession.StatusWORKING).SetUpdatedAt(s.now()).Save(ctx)
		if err != nil || claimed != 1 {
			return nil, err
		}
		working, err := c.AgentSession.Get(ctx, a.ID)
		if err != nil {
			return nil, nil // claimed: only the event is lost, as before
		}
		return []activity.Event{sessionUpdated(working)}, nil
	})
	unlockState()
	unlock()
	if err != nil {
		return nil, apperr.Storage(err, "mark the session working")
	}
	if claimed == 0 {
		return nil, apperr.New(apperr.SessionBusy, "session %q is already running a turn; wait for it or interrupt it", a.ID)
	}
	// Once Codex has the request it may start the turn: a client that goes
	// away must not make tuttid forget it. The runtime bounds the call.
	ctx = context.WithoutCancel(ctx)
	// Stored before turn/start is written, so that a crash before the reply
	// leaves a turn to settle from Codex (store_turn_pending.go).
	pending, err := s.pending.store(ctx, a)
	if err != nil {
		s.releaseClaim(ctx, a)
		return nil, apperr.Storage(err, "store the turn")
	}
	rt, err := s.rt.SendTurn(ctx, agent.SendTurnInput{
		Provider: a.Provider, ThreadID: a.ProviderSessionID, Cwd: cwd, Settings: a.Settings, Text: text,
		ModelProvider: ModelProviderOf(a),
	})
	if err != nil {
		s.pending.drop(ctx, a, pending)
		s.releaseClaim(ctx, a)
		return nil, RuntimeError(err, "start the turn")
	}
	t, err := s.ensureTurn(ctx, a, rt.ID)
	if err != nil {
		// Codex runs the turn: its events are kept until the store is back
		// and store it then. Answering a failure here would be false, and a
		// client that retried would send the text twice.
		s.log.WarnContext(ctx, "send: the turn started but is not stored yet; ingestion stores it",
			"session", a.ID, "turn", rt.ID, "err", err)
		return &ent.Turn{TurnID: rt.ID, AgentSessionID: a.ID, Status: turn.StatusIN_PROGRESS, StartedAt: s.now()}, nil
	}
	return t, nil
}

// releaseClaim gives a session whose turn did not start back the status it
// had, unless a turn did start after all (ingestion stored it). The write
// that fails it (a full disk) is what failed the send: it is tried again
// in the background until the store is back, or the session would stay
// WORKING, refusing every send, until tuttid restarts.
func (s *Service) releaseClaim(ctx context.Context, a *ent.AgentSession) {
	err := s.tryReleaseClaim(ctx, a)
	if err == nil {
		return
	}
	s.log.ErrorContext(ctx, "send: could not restore the session's status; trying again until the store is back", "session", a.ID, "err", err)
	go func() {
		ctx := context.WithoutCancel(ctx)
		wait := releaseRetryFirst
		for deadline := time.Now().Add(releaseRetryFor); time.Now().Before(deadline); wait = min(2*wait, releaseRetryMax) {
			time.Sleep(wait)
			if err = s.tryReleaseClaim(ctx, a); err == nil {
				s.log.InfoContext(ctx, "send: the session's status restored", "session", a.ID)
				return
			}
		}
		s.log.ErrorContext(ctx, "send: gave up restoring the session's status; the next start settles it", "session", a.ID, "err", err)
	}()
}

// How releaseClaim tries again.
const (
	releaseRetryFirst = 100 * time.Millisecond
	releaseRetryMax   = 2 * time.Second
	releaseRetryFor   = 30 * time.Minute
)

func (s *Service) tryReleaseClaim(ctx context.Context, a *ent.AgentSession) error {
	started, err := s.read.HasRunningTurn(ctx, a.ID)
	if err != nil {
		return err
	}
	if started {
		return nil
	}
	defer s.lockState(a.ID)()
	err = s.changes.commit(ctx, func(c *ent.Client) ([]activity.Event, error) {
		n, err := c.AgentSession.Update().
			Where(agentsession.ID(a.ID), agentsession.StatusEQ(agentsession.StatusWORKING)).
			SetStatus(a.Status).SetUpdatedAt(s.now()).Save(ctx)
		if err != nil || n != 1 {
			return nil, err
		}
		restored, err := c.AgentSession.Get(ctx, a.ID)
		if err != nil {
			return nil, nil // restored: only the event is lost, as before
		}
		return []activity.Event{sessionUpdated(restored)}, nil
	})
	return err
}

// ensureTurn stores a turn the provider started, unless ingestion already
// did (the provider's notifications can overtake the turn/start reply).
func (s *Service) ensureTurn(ctx context.Context, a *ent.AgentSession, turnID string) (*ent.Turn, error) {
	if err := s.pending.adopt(ctx, a, turnID); err != nil {
		return nil, apperr.Storage(err, "store the turn")
	}
	err := s.store.Client.Turn.Create().
		SetTurnID(turnID).SetAgentSessionID(a.ID).SetStatus(turn.StatusIN_PROGRESS).SetStartedAt(s.now()).
		OnConflictColumns(turn.FieldAgentSessionID, turn.FieldTurnID).DoNothing().
		Exec(ctx)
	// DoNothing reports an existing row as sql.ErrNoRows.
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, apperr.Storage(err, "store the turn")
	}
	t, err := s.read.Turn(ctx, a.ID, turnID)
	if err == nil && t == nil {
		err = apperr.New(apperr.Internal, "turn %q was stored but cannot be read", turnID)
	}
	return t, err
}

// Interrupt stops a session's running turn and returns it.
func (s *Service) Interrupt(ctx context.Context, workspaceID, sessionID, turnID string) (*ent.Turn, error) {
	if err := validate.ID("turnId", turnID); err != nil {
		return nil, err
	}
	a, err := s.read.RequireSession(ctx, workspaceID, sessionID)
	if err != nil {
		return nil, err
	}
	t, err := s.read.Turn(ctx, a.ID, turnID)
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, apperr.New(apperr.TurnNotFound, "turn %q does not exist in session %q", turnID, a.ID)
	}
	if t.Status != turn.StatusIN_PROGRESS {
		return nil, apperr.New(apperr.SessionNotBusy, "turn %q is not running (it is %s)", turnID, t.Status)
	}
	err = s.rt.Interrupt(ctx, agent.InterruptInput{Provider: a.Provider, ThreadID: a.ProviderSessionID, TurnID: turnID})
	if errors.Is(err, agent.ErrTurnNotFound) {
		// Codex has no active turn: it has not begun yet, or just ended.
		return nil, apperr.Wrap(err, apperr.SessionNotBusy, "turn %q is not running in the provider (it has not started yet or just ended); try again", turnID)
	}
	if err != nil {
		return nil, RuntimeError(err, "interrupt the turn")
	}
	t, err = s.store.Client.Turn.Get(ctx, t.ID)
	if err != nil {
		return nil, apperr.Storage(err, "read the turn")
	}
	return t, nil
}

// SteerInput adds a person's text to a session's running turn.
type SteerInput struct {
	WorkspaceID string
	SessionID   string
	TurnID      string
	Text        string
}

// Steer adds the text to the running turn (Codex's turn/steer). Codex
// reports the text as a user message item of that turn, which ingestion
// stores like any other.
func (s *Service) Steer(ctx context.Context, in SteerInput) (*ent.Turn, error) {
	if err := validate.ID("turnId", in.TurnID); err != nil {
		return nil, err
	}
	if strings.TrimSpace(in.Text) == "" {
		return nil, apperr.New(apperr.InvalidInput, "text is required")
	}
	if err := validate.Message("text", in.Text, validate.MaxMessageLen); err != nil {
		return nil, err
	}
	a, err := s.read.RequireSession(ctx, in.WorkspaceID, in.SessionID)
	if err != nil {
		return nil, err
	}
	t, err := s.read.Turn(ctx, a.ID, in.TurnID)
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, apperr.New(apperr.TurnNotFound, "turn %q does not exist in session %q", in.TurnID, a.ID)
	}
	if t.Status != turn.StatusIN_PROGRESS {
		return nil, apperr.New(apperr.TurnNotRunning, "turn %q is not running (it is %s); send a message instead", in.TurnID, t.Status)
	}
	st, ok := s.rt.(agent.Steerer)
	if !ok {
		return nil, apperr.New(apperr.UnsupportedProvider, "the agent runtime cannot steer a running turn")
	}
	err = st.Steer(ctx, agent.SteerInput{Provider: a.Provider, ThreadID: a.ProviderSessionID, TurnID: in.TurnID, Text: in.Text})
	if errors.Is(err, agent.ErrTurnNotRunning) {
		return nil, apperr.Wrap(err, apperr.TurnNotRunning, "turn %q is not running in Codex (it has not started yet or just ended)", in.TurnID)
	}
	if err != nil {
		return nil, RuntimeError(err, "steer the turn")
	}
	return t, nil
}

func sessionUpdated(a *ent.AgentSession) activity.Event {
	return activity.Event{Kind: activity.SessionUpdated, WorkspaceID: a.WorkspaceID, AgentSessionID: a.ID, Session: a}
}
