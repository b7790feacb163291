package explore

import (
	"context"
	"sync"
	"time"

	"tuttid/apperr"
	"tuttid/codebranch"
	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/ent/checkrun"
	"tuttid/ent/exploration"
	"tuttid/ent/explorationbranch"
	"tuttid/ent/predicate"
	"tuttid/ent/turn"
	"tuttid/validate"
)

// State is an exploration's: STARTING while a branch is being forked,
// RUNNING while a branch's turn or check is queued or running, SETTLED
// when every branch is idle, failed or archived.
type State string

const (
	StateStarting State = "STARTING"
	StateRunning  State = "RUNNING"
	StateSettled  State = "SETTLED"
)

// BranchState is a branch's standing now.
type BranchState string

const (
	BranchForking  BranchState = "FORKING"
	BranchQueued   BranchState = "QUEUED"
	BranchRunning  BranchState = "RUNNING"
	BranchIdle     BranchState = "IDLE"
	BranchFailed   BranchState = "FAILED"
	BranchArchived BranchState = "ARCHIVED"
	// BranchStopped: the exploration was stopped before the branch's first
	// turn started.
	BranchStopped BranchState = "STOPPED"
)

// View is an exploration as read: its branches in input order, each with
// what ranks it.
type View struct {
	*ent.Exploration
	Branches []*Branch
	State    State
	standing standing
}

// standing is the branches' changes (git, in each branch's worktree) and
// ranks, read once per view and only when asked (Stand): a list of
// explorations that names their branches reads no worktree. The GUI reads
// the shown session's list on every exploration event; at 8 branches each
// read cost 8 git processes.
type standing struct {
	once sync.Once
	read func(ctx context.Context, sessionIDs []string) (map[string]codebranch.Summary, error)
	err  error
}

// Stand reads the branches' changes and ranks them, once: Branch.Changes
// and Branch.Rank are set after it.
func (v *View) Stand(ctx context.Context) error {
	v.standing.once.Do(func() {
		var ids []string
		for _, b := range v.Branches {
			if b.Session != nil {
				ids = append(ids, b.Session.ID)
			}
		}
		if v.standing.read != nil && len(ids) > 0 {
			sums, err := v.standing.read(ctx, ids)
			if err != nil {
				v.standing.err = err
				return
			}
			for _, b := range v.Branches {
				if sum, ok := sums[b.Row.ChildAgentSessionID]; ok && sum.FilesChanged >= 0 {
					b.Changes = &Totals{Files: sum.FilesChanged, Added: sum.Added, Deleted: sum.Deleted}
				}
			}
		}
		rank(v.Branches)
	})
	return v.standing.err
}

// Branch is one branch as read.
type Branch struct {
	Row *ent.ExplorationBranch
	// Session is the fork; nil while forking, when it failed or was
	// deleted.
	Session *ent.AgentSession
	State   BranchState
	// ErrorCode and Error say why a FAILED branch failed.
	ErrorCode, Error string
	// QueuePosition: 1 is next; 0 when not queued.
	QueuePosition int
	// Latest is the newest check of the branch's turns, nil when none ran:
	// its id, turn, state, exit code and duration only (Check and Checks
	// read the rows whole, when asked: checks.go).
	Latest *ent.CheckRun
	checks *checkBatch
	// Changes is the size of the branch's files against the fork point;
	// nil when it could not be read. Set by View.Stand.
	Changes *Totals
	// ModelChanged: the branch runs on another model than the explored
	// session's, so Codex compacted the history first and the branch's
	// model reads a summary of the conversation, not the conversation
	// (docs/codex-explore-facts.md).
	ModelChanged bool
	// LastTurn is how the branch's latest own turn stands ("" before its
	// first): part of its standing (rank.go).
	LastTurn turn.Status
	// TokensUsed is what Codex reports for the branch's thread; Duration
	// the sum of the branch's own turns' durations.
	TokensUsed int64
	Duration   time.Duration
	// Rank is the 1-based place in View.Ranking; 0 when FAILED or
	// ARCHIVED. Set by View.Stand.
	Rank int
	// Winner: the person marked this branch the winner.
	Winner bool
	view   *View
}

// Stand is the branch's View.Stand: its Changes and Rank are set after it.
func (b *Branch) Stand(ctx context.Context) error {
	if b.view == nil {
		return nil
	}
	return b.view.Stand(ctx)
}

// Totals is the size of a branch's change.
type Totals struct {
	Files, Added, Deleted int
}

// SummaryState is how the branch's summary stands with the parent:
// "TOLD", "UNCERTAIN" (a telling that did not finish: the parent may or
// may not have it), or "" (never told).
func (b *Branch) SummaryState() string {
	switch {
	case b.Row.ToldAt != nil:
		return SummaryTold
	case b.Row.TellingAt != nil:
		return SummaryUncertain
	}
	return ""
}

// Review is Codex's latest review of the branch, nil when never asked.
func (b *Branch) Review() *Review {
	if b.Row.ReviewingAt == nil {
		return nil
	}
	r := &Review{State: ReviewRunning, StartedAt: *b.Row.ReviewingAt, EndedAt: b.Row.ReviewedAt}
	switch {
	case b.Row.ReviewedAt == nil:
	case b.Row.ReviewError != "":
		r.State, r.Error = ReviewFailed, b.Row.ReviewError
	default:
		r.State, r.Text = ReviewDone, b.Row.Review
	}
	return r
}

// Review is a branch's review by Codex.
type Review struct {
	State       string // ReviewRunning, ReviewDone, ReviewFailed
	Text, Error string
	StartedAt   time.Time
	EndedAt     *time.Time
}

// The states of a Review.
const (
	ReviewRunning = "RUNNING"
	ReviewDone    = "DONE"
	ReviewFailed  = "FAILED"
)

// The states of SummaryState.
const (
	SummaryTold      = "TOLD"
	SummaryUncertain = "UNCERTAIN"
)

// Winner is the branch the person marked, or nil.
func (v *View) Winner() *Branch {
	for _, b := range v.Branches {
		if b.Row.Name == v.WinnerBranch {
			return b
		}
	}
	return nil
}

// Exploration reads one exploration of the parent session (parentID ""
// takes any parent): agent.exploration_not_found when there is none.
func (s *Service) Exploration(ctx context.Context, workspaceID, parentID, id string) (*View, error) {
	if err := validate.ID("explorationId", id); err != nil {
		return nil, err
	}
	q := s.store.Client.Exploration.Query().Where(exploration.ID(id), exploration.WorkspaceID(workspaceID))
	if parentID != "" {
		q.Where(exploration.ParentAgentSessionID(parentID))
	}
	x, err := q.Only(ctx)
	if ent.IsNotFound(err) {
		return nil, apperr.New(apperr.ExplorationNotFound, "no exploration %q of session %q", id, parentID)
	}
	if err != nil {
		return nil, apperr.Storage(err, "read the exploration")
	}
	vs, err := s.views(ctx, []*ent.Exploration{x})
	if err != nil {
		return nil, err
	}
	return vs[0], nil
}

// MaxListed bounds Explorations: each listed branch costs a read of its
// changes (git).
const MaxListed = 20

// Explorations are the explorations made from a session, newest first (at
// most MaxListed).
func (s *Service) Explorations(ctx context.Context, workspaceID, parentID string) ([]*View, error) {
	xs, err := s.store.Client.Exploration.Query().
		Where(exploration.WorkspaceID(workspaceID), exploration.ParentAgentSessionID(parentID)).
		Order(ent.Desc(exploration.FieldCreatedAt), ent.Desc(exploration.FieldID)).Limit(MaxListed).All(ctx)
	if err != nil {
		return nil, apperr.Storage(err, "read the explorations")
	}
	return s.views(ctx, xs)
}

// ExplorationOf is the exploration a session is a branch of, or nil.
func (s *Service) ExplorationOf(ctx context.Context, sessionID string) (*View, error) {
	b, err := s.store.Client.ExplorationBranch.Query().
		Where(explorationbranch.ChildAgentSessionID(sessionID)).WithExploration().First(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, apperr.Storage(err, "read the session's exploration")
	}
	vs, err := s.views(ctx, []*ent.Exploration{b.Edges.Exploration})
	if err != nil {
		return nil, err
	}
	return vs[0], nil
}

// views reads the explorations' branches and what ranks them, in a fixed
// number of queries for all of them.
func (s *Service) views(ctx context.Context, xs []*ent.Exploration) ([]*View, error) {
	if len(xs) == 0 {
		return nil, nil
	}
	ids := make([]string, len(xs))
	for i, x := range xs {
		ids[i] = x.ID
	}
	rows, err := s.store.Client.ExplorationBranch.Query().Where(explorationbranch.ExplorationIDIn(ids...)).
		Order(ent.Asc(explorationbranch.FieldOrdinal)).All(ctx)
	if err != nil {
		return nil, apperr.Storage(err, "read the exploration's branches")
	}
	var sessionIDs []string
	for _, b := range rows {
		if b.ChildAgentSessionID != "" {
			sessionIDs = append(sessionIDs, b.ChildAgentSessionID)
		}
	}
	// The explored sessions too (in the same query): a branch on another
	// model than its parent's is told a summary (ModelChanged).
	read := append([]string(nil), sessionIDs...)
	for _, x := range xs {
		read = append(read, x.ParentAgentSessionID)
	}
	sessions, err := s.store.Client.AgentSession.Query().Where(agentsession.IDIn(read...)).All(ctx)
	if err != nil {
		return nil, apperr.Storage(err, "read the branches' sessions")
	}
	byID := map[string]*ent.AgentSession{}
	for _, a := range sessions {
		byID[a.ID] = a
	}
	// The branches' own turns (ownTurns), not the history each inherited:
	// a branch of a long conversation has thousands.
	own := make([]predicate.Turn, 0, len(sessionIDs))
	for _, id := range sessionIDs {
		if a := byID[id]; a != nil {
			own = append(own, ownTurns(a))
		}
	}
	var turns []*ent.Turn
	if len(own) > 0 {
		if turns, err = s.store.Client.Turn.Query().Where(turn.Or(own...)).
			Select(turn.FieldAgentSessionID, turn.FieldTurnID, turn.FieldStartedAt, turn.FieldCompletedAt, turn.FieldStatus).All(ctx); err != nil {
			return nil, apperr.Storage(err, "read the branches' turns")
		}
	}
	took := map[string]time.Duration{}
	last := map[string]*ent.Turn{}
	for _, t := range turns {
		if t.CompletedAt != nil {
			took[t.AgentSessionID] += t.CompletedAt.Sub(t.StartedAt)
		}
		if l := last[t.AgentSessionID]; l == nil || t.StartedAt.After(l.StartedAt) {
			last[t.AgentSessionID] = t
		}
	}
	checks, err := s.readChecks(ctx, sessionIDs, turns)
	if err != nil {
		return nil, err
	}
	queue, err := s.queuePositions(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*View, len(xs))
	byX := map[string]*View{}
	for i, x := range xs {
		out[i] = &View{Exploration: x}
		if s.code != nil {
			out[i].standing.read = s.code.Summaries
		}
		byX[x.ID] = out[i]
	}
	for _, row := range rows {
		b := &Branch{Row: row, Session: byID[row.ChildAgentSessionID], Latest: checks.latest[row.ChildAgentSessionID], checks: checks,
			Duration: took[row.ChildAgentSessionID], QueuePosition: queue[row.ID]}
		if b.Session != nil && b.Session.TokenUsage != nil {
			b.TokensUsed = b.Session.TokenUsage.TotalTokens
		}
		if v := byX[row.ExplorationID]; v != nil && b.Session != nil {
			if parent := byID[v.ParentAgentSessionID]; parent != nil {
				b.ModelChanged = b.Session.Settings.Model != "" && b.Session.Settings.Model != parent.Settings.Model
			}
		}
		if t := last[row.ChildAgentSessionID]; t != nil {
			b.LastTurn = t.Status
		}
		b.State, b.ErrorCode, b.Error = branchState(row, b.Session)
		if b.State == BranchQueued && b.QueuePosition == 0 {
			// It got its slot between the two reads: its turn is starting.
			// Never QUEUED without a position.
			b.State = BranchRunning
		}
		v := byX[row.ExplorationID]
		b.view = v
		b.Winner = v.WinnerBranch == row.Name
		v.Branches = append(v.Branches, b)
	}
	for _, v := range out {
		v.State = v.state()
	}
	return out, nil
}

func branchState(row *ent.ExplorationBranch, a *ent.AgentSession) (BranchState, string, string) {
	switch row.State {
	case explorationbranch.StateForking:
		return BranchForking, "", ""
	case explorationbranch.StateFailed:
		return BranchFailed, row.ErrorCode, row.Error
	}
	switch {
	case a == nil:
		return BranchFailed, string(apperr.SessionNotFound), "the branch's session was deleted"
	case a.Archived:
		return BranchArchived, "", ""
	case row.State == explorationbranch.StateQueued:
		return BranchQueued, "", ""
	case a.Status == agentsession.StatusWORKING:
		return BranchRunning, "", ""
	case row.State == explorationbranch.StateStopped:
		return BranchStopped, "", ""
	}
	return BranchIdle, "", ""
}

func (v *View) state() State {
	st := StateSettled
	for _, b := range v.Branches {
		switch {
		case b.State == BranchForking:
			return StateStarting
		case b.State == BranchQueued || b.State == BranchRunning:
			st = StateRunning
		case b.Latest != nil && b.Latest.State == checkrun.StateRunning && b.State != BranchArchived:
			st = StateRunning
		}
	}
	return st
}

// queuePositions numbers the queued branches of this instance, 1 first.
func (s *Service) queuePositions(ctx context.Context) (map[int]int, error) {
	ids, err := s.store.Client.ExplorationBranch.Query().
		Where(explorationbranch.StateEQ(explorationbranch.StateQueued),
			explorationbranch.HasExplorationWith(exploration.HasParentWith(agentsession.InstanceID(s.instance)))).
		Order(ent.Asc(explorationbranch.FieldQueuedAt), ent.Asc(explorationbranch.FieldID)).IDs(ctx)
	if err != nil {
		return nil, apperr.Storage(err, "read the queue")
	}
	out := make(map[int]int, len(ids))
	for i, id := range ids {
		out[id] = i + 1
	}
	return out, nil
}

// ownTurns selects a branch session's own turns: those that started after
// it was made (the turns of the history it inherited are stored as
// started before).
func ownTurns(a *ent.AgentSession) predicate.Turn {
	return turn.And(turn.AgentSessionID(a.ID), turn.StartedAtGTE(a.CreatedAt))
}
