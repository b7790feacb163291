package explore

import (
	"context"
	"errors"
	"sync"
	"time"

	"tuttid/activity"
	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/ent/checkrun"
	"tuttid/ent/explorationbranch"
	"tuttid/sandbox"
	"tuttid/shellrun"
)

// checks bounds the checks running at once (a `go test` costs about what
// a turn does): the turn bound, at least one.
type checks struct {
	slots chan struct{}
	// running stops a session's running check (ArchiveOthers: archiving
	// waits for the worktree's readers, and a check is one).
	mu      sync.Mutex
	running map[string]runningCheck
}

// runningCheck is a check of this process: cancel stops it; ended is
// closed once its end is stored (or given up).
type runningCheck struct {
	cancel context.CancelFunc
	ended  chan struct{}
}

// stop ends the session's running check, if any: INTERRUPTED. It
// returns a channel closed once that check's end is stored, nil when this
// process runs none.
func (c *checks) stop(sessionID string) <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.running[sessionID]; ok {
		r.cancel()
		return r.ended
	}
	return nil
}

// track registers the session's check; untrack, deferred by the check's
// run, ends it after its end is stored.
func (c *checks) track(sessionID string, cancel context.CancelFunc) (untrack func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running == nil {
		c.running = map[string]runningCheck{}
	}
	r := runningCheck{cancel: cancel, ended: make(chan struct{})}
	c.running[sessionID] = r
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.running[sessionID].ended == r.ended {
			delete(c.running, sessionID)
		}
		cancel()
		close(r.ended)
	}
}

// stopWait bounds how long an archive waits for a check it stopped to
// store its end (a kill and one write: milliseconds).
const stopWait = 10 * time.Second

// awaitEnd waits for a stopped check's end to be stored, at most stopWait.
func awaitEnd(ctx context.Context, ended <-chan struct{}) {
	if ended == nil {
		return
	}
	t := time.NewTimer(stopWait)
	defer t.Stop()
	select {
	case <-ended:
	case <-t.C:
	case <-ctx.Done():
	}
}

// TurnEnded is session's hook (session.Config.TurnEnded): a turn ended
// frees a slot of the turn bound, and a branch's turn gets its check. It
// returns at once; the work runs in the background.
func (s *Service) TurnEnded(_ context.Context, a *ent.AgentSession, t *ent.Turn) {
	s.background(func(ctx context.Context) {
		b, err := s.store.Client.ExplorationBranch.Query().
			Where(explorationbranch.ChildAgentSessionID(a.ID)).WithExploration().First(ctx)
		if err != nil && !ent.IsNotFound(err) {
			s.log.WarnContext(ctx, "explore: the session's branch not read", "session", a.ID, "err", err)
		}
		if b != nil {
			x := b.Edges.Exploration
			if b.State == explorationbranch.StateStopped {
				// The person started the stopped branch's first turn.
				if err := b.Update().SetState(explorationbranch.StateStarted).Exec(ctx); err != nil {
					s.log.WarnContext(ctx, "explore: a stopped branch's turn not recorded", "branch", b.Name, "err", err)
				}
			}
			s.updated(ctx, x)
			// Only a completed turn gets a check; one the person's stop
			// ended gets none (checkable).
			if x.CheckCommand != "" && checkable(x, t) {
				s.background(func(ctx context.Context) { s.runCheck(ctx, x, a, t.TurnID) })
			}
		}
		s.pump(ctx)
	})
}

// runCheck runs the exploration's check in the branch's worktree for one
// of its turns, once: a CheckRun row per (session, turn), stored running
// before the command starts and ended with its result. A check that
// could not start is ERROR, one that reached its bound TIMED_OUT (its
// process group killed).
func (s *Service) runCheck(ctx context.Context, x *ent.Exploration, a *ent.AgentSession, turnID string) {
	// Tracked before its row exists: a stop never takes a check being
	// recorded for one left by nothing (endStale).
	ctx, cancel := context.WithCancel(ctx)
	defer s.checks.track(a.ID, cancel)()
	row, err := s.store.Client.CheckRun.Create().SetID(s.newID()).SetWorkspaceID(a.WorkspaceID).
		SetAgentSessionID(a.ID).SetTurnID(turnID).SetExplorationID(x.ID).SetStartedAt(s.now()).Save(ctx)
	if ent.IsConstraintError(err) {
		return // this turn's check ran, or runs
	}
	if err != nil {
		s.log.WarnContext(ctx, "explore: a check not recorded; not run", "session", a.ID, "turn", turnID, "err", err)
		return
	}
	s.checkUpdated(ctx, row)
	select {
	case s.checks.slots <- struct{}{}:
		defer func() { <-s.checks.slots }()
	case <-ctx.Done():
		s.endCheck(context.WithoutCancel(ctx), x, row, shellrun.Result{}, ctx.Err())
		return
	}
	var res shellrun.Result
	var runErr error
	confine, err := s.commandSandbox(ctx, a)
	if err != nil {
		s.endCheck(context.WithoutCancel(ctx), x, row, res, err)
		return
	}
	err = s.code.InWorktree(ctx, a, func(dir string, env []string) error {
		res, runErr = shellrun.Run(ctx, shellrun.Command{
			Line: x.CheckCommand, Dir: dir, Env: env,
			Timeout: time.Duration(x.CheckTimeoutMs) * time.Millisecond, Nice: s.nice,
			Sandbox: confine.codex, ReadOnly: confine.readOnly,
			OnStart: func(pgid int) {
				if err := s.store.Client.CheckRun.UpdateOne(row).SetPgid(pgid).Exec(ctx); err != nil {
					s.log.WarnContext(ctx, "explore: a check's process group not recorded", "check", row.ID, "err", err)
				}
			},
		})
		return nil
	})
	if err == nil {
		err = runErr
	}
	s.endCheck(context.WithoutCancel(ctx), x, row, res, err)
}

// endCheck stores a check's result and tells the exploration. A result
// the store refuses (a full disk) is tried again until it is stored or
// tuttid stops (storeCheckEnd): never a row left RUNNING once the store
// takes writes again.
func (s *Service) endCheck(ctx context.Context, x *ent.Exploration, row *ent.CheckRun, res shellrun.Result, err error) {
	s.code.Touched(row.AgentSessionID)
	finished := s.now()
	done, ok := s.storeCheckEnd(ctx, row, func() *ent.CheckRunUpdateOne {
		return s.checkEnd(row, finished, res, err)
	})
	if !ok {
		return
	}
	if res.NiceErr != nil {
		s.log.WarnContext(ctx, "explore: a check ran at tuttid's CPU priority", "check", row.ID, "err", res.NiceErr)
	}
	s.log.InfoContext(ctx, "explore: check ended", "exploration", x.ID, "session", row.AgentSessionID,
		"turn", row.TurnID, "state", done.State, "duration_ms", res.Duration.Milliseconds())
	s.checkUpdated(ctx, done)
	s.updated(ctx, x)
}

// Bounds of the retries of a check's end the store refused.
const (
	checkEndFirstRetry = 50 * time.Millisecond
	checkEndMaxRetry   = 5 * time.Second
)

// storeCheckEnd saves the update made by build, again and again (the
// wait doubling up to checkEndMaxRetry) while the store refuses it; false
// when the service closed first (the next start runs the check again).
func (s *Service) storeCheckEnd(ctx context.Context, row *ent.CheckRun, build func() *ent.CheckRunUpdateOne) (*ent.CheckRun, bool) {
	wait := checkEndFirstRetry
	for attempt := 1; ; attempt++ {
		done, err := build().Save(ctx)
		if err == nil {
			if attempt > 1 {
				s.log.InfoContext(ctx, "explore: a check's result stored after the store refused it", "check", row.ID, "attempts", attempt)
			}
			return done, true
		}
		if ent.IsNotFound(err) {
			return nil, false // the branch was deleted
		}
		if attempt == 1 {
			s.log.ErrorContext(ctx, "explore: a check's result not stored; trying again", "check", row.ID, "err", err)
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-s.bgCtx.Done():
			t.Stop()
			s.log.ErrorContext(ctx, "explore: a check's result not stored before tuttid stopped; the next start runs it again",
				"check", row.ID, "err", err)
			return nil, false
		}
		wait = min(2*wait, checkEndMaxRetry)
	}
}

// checkEnd is the update that ends a check with its result.
func (s *Service) checkEnd(row *ent.CheckRun, finished time.Time, res shellrun.Result, err error) *ent.CheckRunUpdateOne {
	up := s.store.Client.CheckRun.UpdateOne(row).SetPgid(0).SetFinishedAt(finished).
		SetDurationMs(res.Duration.Milliseconds()).SetOutput(res.Output).SetOutputTruncated(res.Truncated)
	switch {
	case err != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
		// tuttid is stopping (the next start runs it again), or the
		// branch is being archived.
		up.SetState(checkrun.StateInterrupted)
	case errors.Is(err, sandbox.ErrUnavailable):
		up.SetState(checkrun.StateError).SetOutput("the check could not run: no sandbox could be made for it (" + err.Error() +
			"). It runs only as the branch's agent could; to run it as you, unsandboxed, set the workspace's commandSandbox to NONE.")
	case err != nil:
		e := apperr.From(err)
		up.SetState(checkrun.StateError).SetOutput("the check could not run: " + string(e.Code) + ": " + e.Message)
	case res.TimedOut:
		up.SetState(checkrun.StateTimedOut).SetExitCode(res.ExitCode)
	case res.Passed():
		up.SetState(checkrun.StatePassed).SetExitCode(res.ExitCode)
	default:
		up.SetState(checkrun.StateFailed).SetExitCode(res.ExitCode)
	}
	return up
}

// endStale ends the session's checks a row says RUNNING while no check
// of this process runs them (their end was never stored, and no retry
// is left: tuttid gave up as it stopped): INTERRUPTED, as a stop of a
// running check leaves it. The next start would run them again.
func (s *Service) endStale(ctx context.Context, sessionID string) error {
	rows, err := s.store.Client.CheckRun.Query().
		Where(checkrun.AgentSessionID(sessionID), checkrun.StateEQ(checkrun.StateRunning)).All(ctx)
	if err != nil {
		return err
	}
	for _, row := range rows {
		done, err := row.Update().Where(checkrun.StateEQ(checkrun.StateRunning)).
			SetState(checkrun.StateInterrupted).SetPgid(0).SetFinishedAt(s.now()).Save(ctx)
		if ent.IsNotFound(err) {
			continue // ended meanwhile
		}
		if err != nil {
			return err
		}
		s.checkUpdated(ctx, done)
	}
	return nil
}

func (s *Service) checkUpdated(ctx context.Context, c *ent.CheckRun) {
	if s.pub == nil {
		return
	}
	s.pub.Publish(ctx, activity.Event{Kind: activity.CheckUpdated, WorkspaceID: c.WorkspaceID,
		AgentSessionID: c.AgentSessionID, CheckRun: c})
}
