package explore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/ent/exploration"
	"tuttid/ent/explorationbranch"
	"tuttid/fork"
)

// Result is an exploration as exploreSession answers it.
type Result struct {
	Exploration *View
	// Replayed: the requestId had made it before; nothing new was made.
	Replayed bool
}

// Explore checks the request and every branch as a fork (nothing is made
// when one is refused), stores the exploration, and answers it with every
// branch FORKING. The branches fork in the background (each an ordinary
// WORKTREE fork with requestId <requestId>.<name>), and each one's first
// turn starts as soon as it is forked, under the turn bound, queueing the
// rest; EXPLORATION_UPDATED says when each is made, queued, started or
// failed. Forks of one parent run one at a time and a worktree's setup may
// take minutes: a person watches the branches come rather than waiting on
// a request. A branch that fails does not undo the others: it says why. A
// stop meanwhile leaves the rest FORKING, and Reconcile forks them at the
// next start. The same requestId again answers the stored exploration.
func (s *Service) Explore(ctx context.Context, in Input) (*Result, error) {
	in, err := normalize(in)
	if err != nil {
		return nil, err
	}
	fp := in.fingerprint()
	defer s.requests.Lock(in.WorkspaceID + "\x00" + in.RequestID)()
	if x, err := s.replay(ctx, in, fp); x != nil || err != nil {
		return x, err
	}
	parent, err := s.sessions.Session(ctx, in.WorkspaceID, in.ParentSessionID)
	if err != nil {
		return nil, err
	}
	if parent == nil {
		return nil, apperr.New(apperr.ForkParentNotFound, "session %q does not exist in workspace %q", in.ParentSessionID, in.WorkspaceID)
	}
	for _, b := range in.Branches {
		if err := s.forks.Check(ctx, forkInput(in, b)); err != nil {
			return nil, err
		}
	}
	check, timeout, err := s.checkOf(ctx, in)
	if err != nil {
		return nil, err
	}
	// From here the caller going away must not leave branches half made.
	ctx = context.WithoutCancel(ctx)
	x, err := s.save(ctx, in, fp, check, timeout)
	if err != nil {
		return nil, err
	}
	s.updated(ctx, x)
	s.crash(CrashStored)
	branches := x.Edges.Branches
	s.background(func(ctx context.Context) { s.forkAll(ctx, x, branches) })
	v, err := s.Exploration(ctx, x.WorkspaceID, x.ParentAgentSessionID, x.ID)
	if err != nil {
		return nil, err
	}
	return &Result{Exploration: v}, nil
}

// replay answers a requestId used before: the same request gets its
// exploration, another one agent.fork_request_conflict.
func (s *Service) replay(ctx context.Context, in Input, fp string) (*Result, error) {
	x, err := s.store.Client.Exploration.Query().
		Where(exploration.WorkspaceID(in.WorkspaceID), exploration.RequestID(in.RequestID)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, apperr.Storage(err, "read the exploration request")
	}
	if x.Fingerprint != fp {
		return nil, apperr.New(apperr.ForkRequestConflict,
			"request %q was already used for a different exploration (of session %q); use a new requestId", in.RequestID, x.ParentAgentSessionID)
	}
	v, err := s.Exploration(ctx, x.WorkspaceID, x.ParentAgentSessionID, x.ID)
	if err != nil {
		return nil, err
	}
	return &Result{Exploration: v, Replayed: true}, nil
}

// checkOf is the check in effect: the request's, else the workspace's.
func (s *Service) checkOf(ctx context.Context, in Input) (string, time.Duration, error) {
	w, err := s.store.Client.Workspace.Get(ctx, in.WorkspaceID)
	if err != nil {
		if ent.IsNotFound(err) {
			return "", 0, apperr.New(apperr.WorkspaceNotFound, "workspace %q does not exist", in.WorkspaceID)
		}
		return "", 0, apperr.Storage(err, "read the workspace")
	}
	check := w.CheckCommand
	if in.CheckCommand != nil {
		check = *in.CheckCommand
	}
	timeout := in.CheckTimeout
	if timeout == 0 {
		timeout = time.Duration(w.CheckTimeoutMs) * time.Millisecond
	}
	if timeout == 0 {
		timeout = DefaultCheckTimeout
	}
	return check, timeout, nil
}

// save writes the exploration and its branches (forking) in one
// transaction.
func (s *Service) save(ctx context.Context, in Input, fp, check string, timeout time.Duration) (*ent.Exploration, error) {
	var x *ent.Exploration
	err := s.store.WithTx(ctx, func(tx *ent.Tx) error {
		now := s.now()
		var err error
		x, err = tx.Exploration.Create().SetID(s.newID()).SetWorkspaceID(in.WorkspaceID).
			SetParentAgentSessionID(in.ParentSessionID).SetRequestID(in.RequestID).SetFingerprint(fp).
			SetLastTurnID(in.LastTurnID).SetPrompt(in.Prompt).SetCheckCommand(check).
			SetCheckTimeoutMs(timeout.Milliseconds()).SetCreatedAt(now).SetUpdatedAt(now).Save(ctx)
		if err != nil {
			return err
		}
		for i, b := range in.Branches {
			settings, err := json.Marshal(b.Settings)
			if err != nil {
				return err
			}
			row, err := tx.ExplorationBranch.Create().SetExplorationID(x.ID).SetOrdinal(i).SetName(b.Name).
				SetPrompt(b.Prompt).SetSettings(settings).SetForkRequestID(forkRequestID(in.RequestID, b.Name)).
				SetCreatedAt(now).Save(ctx)
			if err != nil {
				return err
			}
			x.Edges.Branches = append(x.Edges.Branches, row)
		}
		return nil
	})
	if err != nil {
		return nil, apperr.Storage(err, "store the exploration")
	}
	return x, nil
}

// forkAll forks the branches still forking, at most four at once (the
// worktree's git and its setup are the costly part), and queues each made
// one, starting its first turn when the bound allows; a failed one records
// why.
func (s *Service) forkAll(ctx context.Context, x *ent.Exploration, branches []*ent.ExplorationBranch) {
	slots := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for _, b := range branches {
		if b.State != explorationbranch.StateForking {
			continue
		}
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			s.forkOne(ctx, x, b)
		}()
	}
	wg.Wait()
}

func (s *Service) forkOne(ctx context.Context, x *ent.Exploration, b *ent.ExplorationBranch) {
	bi, err := branchInput(b)
	var res *fork.Result
	if err == nil {
		res, err = s.forks.Fork(ctx, forkInput(inputOf(x), bi))
	}
	if err != nil && ctx.Err() != nil {
		// tuttid is stopping: the fork's journal makes it whole or absent,
		// and Reconcile forks the branch again at the next start.
		s.log.InfoContext(ctx, "explore: a branch left forking for the next start", "exploration", x.ID, "branch", b.Name, "err", err)
		return
	}
	up := s.store.Client.ExplorationBranch.UpdateOne(b)
	if err != nil {
		e := apperr.From(err)
		up.SetState(explorationbranch.StateFailed).SetErrorCode(string(e.Code)).SetError(e.Message)
		s.log.WarnContext(ctx, "explore: a branch was not forked", "exploration", x.ID, "branch", b.Name, "err", err)
	} else {
		up.SetState(explorationbranch.StateQueued).SetChildAgentSessionID(res.Session.ID).SetQueuedAt(s.now())
	}
	if err := up.Exec(ctx); err != nil {
		s.log.ErrorContext(ctx, "explore: a branch's fork not recorded", "exploration", x.ID, "branch", b.Name, "err", err)
	}
	s.updated(ctx, x)
	// Its first turn starts now (bound permitting), not when the slowest
	// sibling is forked: forks of one parent run one at a time.
	if err == nil {
		s.crash(CrashForked)
		s.pump(ctx)
	}
}

// forkInput is branch b's fork: WORKTREE, from the exploration's turn,
// with the branch's settings, titled with the branch's name.
func forkInput(in Input, b BranchInput) fork.Input {
	// The branch's session is called by the branch's name wherever it
	// shows (tree, header, fork markers, Compare, tuttid tree), not
	// "<parent>(forkN)" numbered in the order the forks happened to end.
	title := b.Name
	return fork.Input{WorkspaceID: in.WorkspaceID, ParentSessionID: in.ParentSessionID,
		RequestID: forkRequestID(in.RequestID, b.Name), LastTurnID: in.LastTurnID, Title: &title,
		Settings: b.Settings, Code: &fork.CodeInput{Worktree: true}}
}

func forkRequestID(requestID, name string) string { return requestID + "." + name }

// inputOf is the part of the request a stored exploration keeps.
func inputOf(x *ent.Exploration) Input {
	return Input{WorkspaceID: x.WorkspaceID, ParentSessionID: x.ParentAgentSessionID, RequestID: x.RequestID,
		LastTurnID: x.LastTurnID, Prompt: x.Prompt}
}

func branchInput(b *ent.ExplorationBranch) (BranchInput, error) {
	bi := BranchInput{Name: b.Name, Prompt: b.Prompt}
	if len(b.Settings) > 0 {
		if err := json.Unmarshal(b.Settings, &bi.Settings); err != nil {
			return bi, fmt.Errorf("read branch %q's settings: %w", b.Name, err)
		}
	}
	return bi, nil
}

// fingerprint identifies a request's parameters (not its requestId).
func (in Input) fingerprint() string {
	in.RequestID = ""
	b, _ := json.Marshal(in) // strings, bools, durations: cannot fail
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
