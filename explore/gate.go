package explore

import (
	"context"
	"sync"

	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/ent/exploration"
	"tuttid/ent/explorationbranch"
)

// gate is the bound of concurrent turns on this instance's Codex. The
// queue is the branches stored `queued` (explorations this instance owns),
// oldest first: a restart finds it as it was. A person's sendMessage is
// never queued (a person never waits silently); its turn counts.
type gate struct {
	// mu makes one pump at a time, so that two never both see a free slot.
	mu    sync.Mutex
	limit int
}

// pump starts queued branches' first turns while the bound allows, oldest
// first; a branch whose turn cannot start is failed with the reason.
func (s *Service) pump(ctx context.Context) {
	s.gate.mu.Lock()
	defer s.gate.mu.Unlock()
	for {
		b, err := s.nextQueued(ctx)
		if err != nil {
			s.log.WarnContext(ctx, "explore: the queue could not be read", "err", err)
			return
		}
		if b == nil {
			return
		}
		if b.Edges.Exploration.StoppedAt != nil {
			// Forked after the stop (it was forking then).
			if err := b.Update().SetState(explorationbranch.StateStopped).Exec(ctx); err != nil {
				s.log.WarnContext(ctx, "explore: a stopped exploration's branch not recorded stopped", "branch", b.Name, "err", err)
				return
			}
			s.updated(ctx, b.Edges.Exploration)
			continue
		}
		if s.gate.limit > 0 {
			running, err := s.store.Client.AgentSession.Query().
				Where(agentsession.InstanceID(s.instance), agentsession.StatusEQ(agentsession.StatusWORKING)).Count(ctx)
			if err != nil {
				s.log.WarnContext(ctx, "explore: running turns not counted", "err", err)
				return
			}
			if running >= s.gate.limit {
				return
			}
		}
		s.start(ctx, b)
	}
}

// nextQueued is the oldest queued branch of this instance's explorations.
func (s *Service) nextQueued(ctx context.Context) (*ent.ExplorationBranch, error) {
	b, err := s.store.Client.ExplorationBranch.Query().
		Where(explorationbranch.StateEQ(explorationbranch.StateQueued),
			explorationbranch.HasExplorationWith(exploration.HasParentWith(agentsession.InstanceID(s.instance)))).
		WithExploration().
		Order(ent.Asc(explorationbranch.FieldQueuedAt), ent.Asc(explorationbranch.FieldID)).First(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	return b, err
}

// start sends a branch's first message and records that it started, or
// that it failed and why.
func (s *Service) start(ctx context.Context, b *ent.ExplorationBranch) {
	x := b.Edges.Exploration
	var err error
	// A turn of its own already: a stop came after the send and before
	// this record (a send stores its turn before Codex hears of it).
	if started, serr := s.hasOwnTurn(ctx, b.ChildAgentSessionID); serr != nil || !started {
		_, err = s.sessions.Send(ctx, x.WorkspaceID, b.ChildAgentSessionID, b.Prompt)
	}
	up := b.Update()
	if err != nil {
		e := apperr.From(err)
		up.SetState(explorationbranch.StateFailed).SetErrorCode(string(e.Code)).SetError("the first turn did not start: " + e.Message)
		s.log.WarnContext(ctx, "explore: a branch's first turn did not start", "exploration", x.ID, "branch", b.Name, "err", err)
	} else {
		up.SetState(explorationbranch.StateStarted)
	}
	if err := up.Exec(ctx); err != nil {
		s.log.ErrorContext(ctx, "explore: a branch's start not recorded", "exploration", x.ID, "branch", b.Name, "err", err)
	}
	s.updated(ctx, x)
}

// hasOwnTurn reports whether a branch's session has a turn of its own (one
// that started after the session was made, not an inherited one).
func (s *Service) hasOwnTurn(ctx context.Context, sessionID string) (bool, error) {
	a, err := s.store.Client.AgentSession.Get(ctx, sessionID)
	if err != nil {
		return false, err
	}
	return s.store.Client.Turn.Query().Where(ownTurns(a)).Exist(ctx)
}
