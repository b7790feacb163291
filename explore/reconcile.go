package explore

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/ent/checkrun"
	"tuttid/ent/exploration"
	"tuttid/ent/explorationbranch"
	"tuttid/ent/turn"
)

// Reconcile settles, at start, what a stopped tuttid left of this
// instance's explorations (after fork.Reconcile settled the forks'
// journal): a branch still forking is forked again with its requestId
// (the fork's journal makes it whole or absent, never two); a check left
// running is stopped (its process group, when it is still that check) and
// run again (but what the person's stop ended); a branch's ended turn
// without a check gets one; queued
// branches start as the bound allows. It returns once the forks are
// settled; checks and starts go on in the background.
func (s *Service) Reconcile(ctx context.Context) error {
	owned := exploration.HasParentWith(agentsession.InstanceID(s.instance))
	forking, err := s.store.Client.ExplorationBranch.Query().
		Where(explorationbranch.StateEQ(explorationbranch.StateForking), explorationbranch.HasExplorationWith(owned)).
		WithExploration().All(ctx)
	if err != nil {
		return fmt.Errorf("explore: read the branches left forking: %w", err)
	}
	for _, b := range forking {
		s.forkOne(ctx, b.Edges.Exploration, b)
	}
	if err := s.interruptChecks(ctx); err != nil {
		return err
	}
	if err := s.interruptReviews(ctx); err != nil {
		return err
	}
	s.background(func(ctx context.Context) {
		s.checkMissed(ctx)
		s.pump(ctx)
	})
	return nil
}

// interruptChecks ends the checks left running by this instance's
// previous run: INTERRUPTED, their process group killed when it is still
// theirs (a shell running that command in that session's worktree; a pid
// reused by anything else is left alone). checkMissed runs them again.
func (s *Service) interruptChecks(ctx context.Context) error {
	rows, err := s.store.Client.CheckRun.Query().
		Where(checkrun.StateEQ(checkrun.StateRunning), checkrun.HasSessionWith(agentsession.InstanceID(s.instance))).
		WithSession().All(ctx)
	if err != nil {
		return fmt.Errorf("explore: read the checks left running: %w", err)
	}
	for _, c := range rows {
		if c.Pgid > 0 && c.Edges.Session != nil {
			s.killLeftCheck(ctx, c)
		}
		if err := c.Update().SetState(checkrun.StateInterrupted).SetPgid(0).SetFinishedAt(s.now()).Exec(ctx); err != nil {
			return fmt.Errorf("explore: end a check left running: %w", err)
		}
	}
	return nil
}

func (s *Service) killLeftCheck(ctx context.Context, c *ent.CheckRun) {
	proc := fmt.Sprintf("/proc/%d", c.Pgid)
	cwd, err := os.Readlink(proc + "/cwd")
	if err != nil {
		return // gone
	}
	cmdline, err := os.ReadFile(proc + "/cmdline")
	if err != nil || !isCheckCmdline(cmdline) {
		return
	}
	if filepath.Clean(cwd) != filepath.Clean(c.Edges.Session.Cwd) {
		return
	}
	if err := syscall.Kill(-c.Pgid, syscall.SIGKILL); err == nil {
		s.log.InfoContext(ctx, "explore: killed a check left running", "check", c.ID, "pgid", c.Pgid)
	}
}

// isCheckCmdline says whether a process's command line is a check's
// group leader: /bin/sh -c, or Codex's sandbox running /bin/sh -c
// (sandbox.Codex.Prepare).
func isCheckCmdline(cmdline []byte) bool {
	shell := []byte("/bin/sh\x00-c\x00")
	if bytes.HasPrefix(cmdline, shell) {
		return true
	}
	args := bytes.Split(cmdline, []byte{0})
	return len(args) > 2 && string(args[1]) == "sandbox" && bytes.Contains(cmdline, append([]byte("\x00--\x00"), shell...))
}

// checkMissed runs the check of each branch's latest ended turn that has
// none, or whose check was interrupted (tuttid stopped between the turn's
// end and its check, or during it).
func (s *Service) checkMissed(ctx context.Context) {
	branches, err := s.store.Client.ExplorationBranch.Query().
		Where(explorationbranch.StateEQ(explorationbranch.StateStarted),
			explorationbranch.HasExplorationWith(exploration.HasParentWith(agentsession.InstanceID(s.instance)), exploration.CheckCommandNEQ(""))).
		WithExploration().All(ctx)
	if err != nil {
		s.log.WarnContext(ctx, "explore: the branches' checks not settled", "err", err)
		return
	}
	for _, b := range branches {
		a, err := s.store.Client.AgentSession.Get(ctx, b.ChildAgentSessionID)
		if err != nil || a.Archived || a.Status == agentsession.StatusWORKING {
			continue
		}
		t, err := s.store.Client.Turn.Query().Where(ownTurns(a), turn.StatusNEQ(turn.StatusIN_PROGRESS)).Order(ent.Desc(turn.FieldStartedAt)).First(ctx)
		if err != nil || !checkable(b.Edges.Exploration, t) {
			continue
		}
		c, err := s.store.Client.CheckRun.Query().Where(checkrun.AgentSessionID(a.ID), checkrun.TurnID(t.TurnID)).Only(ctx)
		if err == nil && c.State != checkrun.StateInterrupted {
			continue
		}
		if c != nil {
			if err := s.store.Client.CheckRun.DeleteOne(c).Exec(ctx); err != nil {
				continue
			}
		}
		x := b.Edges.Exploration
		s.background(func(ctx context.Context) { s.runCheck(ctx, x, a, t.TurnID) })
	}
}

// checkable: the turn gets a check. Only a turn that completed: one that
// failed (the model answered an error) or was interrupted (a crash before
// the model saw it, the person's stop) did nothing worth checking, and a
// check of the fork point's files would pass for a branch that did
// nothing. And not one the person's stop ended (stoppedCheck).
func checkable(x *ent.Exploration, t *ent.Turn) bool {
	return t.Status == turn.StatusCOMPLETED && !stoppedCheck(x, t)
}

// stoppedCheck: the person's stop ended the turn's check, or gave the turn
// none (stopExploration): a turn the stop interrupted, or one that ended
// before the stop. A start does not run it again.
func stoppedCheck(x *ent.Exploration, t *ent.Turn) bool {
	if x.StoppedAt == nil {
		return false
	}
	return t.Status == turn.StatusINTERRUPTED || (t.CompletedAt != nil && !t.CompletedAt.After(*x.StoppedAt))
}
