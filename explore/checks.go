package explore

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/ent/checkrun"
	"tuttid/store"
)

// MaxChecksListed bounds Branch.Checks: a branch has a check a turn, each
// with up to 64 KiB of output.
const MaxChecksListed = 20

// checkBatch is the checks of the branches of the views read together
// (Service.views). A view reads each check's id, turn, state, exit code
// and duration only, in the columns SQLite stores before the output (a
// column after it is reached through the output's overflow pages: on
// 40 checks of 64 KiB that was most of an exploration's read); the rows
// whole are read once for the batch, and only when a field asks.
type checkBatch struct {
	store *store.Store
	// order is each session's check ids, newest first; latest each
	// session's newest, partly read.
	order  map[string][]string
	latest map[string]*ent.CheckRun

	newestOnce sync.Once
	newest     map[string]*ent.CheckRun
	newestErr  error

	listOnce sync.Once
	list     map[string][]*ent.CheckRun
	listErr  error
}

// readChecks reads the checks of sessionIDs, ordered by their turns
// (turns: the sessions' own turns; a check runs after its turn, one a
// turn), for views.
func (s *Service) readChecks(ctx context.Context, sessionIDs []string, turns []*ent.Turn) (*checkBatch, error) {
	b := &checkBatch{store: s.store, order: map[string][]string{}, latest: map[string]*ent.CheckRun{}}
	if len(sessionIDs) == 0 {
		return b, nil
	}
	rows, err := s.store.Client.CheckRun.Query().Where(checkrun.AgentSessionIDIn(sessionIDs...)).
		Select(checkrun.FieldID, checkrun.FieldAgentSessionID, checkrun.FieldTurnID, checkrun.FieldState,
			checkrun.FieldExitCode, checkrun.FieldDurationMs).All(ctx)
	if err != nil {
		return nil, apperr.Storage(err, "read the branches' checks")
	}
	started := make(map[[2]string]time.Time, len(turns))
	for _, t := range turns {
		started[[2]string{t.AgentSessionID, t.TurnID}] = t.StartedAt
	}
	slices.SortFunc(rows, func(a, c *ent.CheckRun) int {
		return cmp.Or(started[[2]string{c.AgentSessionID, c.TurnID}].Compare(started[[2]string{a.AgentSessionID, a.TurnID}]),
			cmp.Compare(c.ID, a.ID))
	})
	for _, c := range rows {
		if b.latest[c.AgentSessionID] == nil {
			b.latest[c.AgentSessionID] = c
		}
		b.order[c.AgentSessionID] = append(b.order[c.AgentSessionID], c.ID)
	}
	return b, nil
}

// rows reads the checks ids whole, by id.
func (b *checkBatch) rows(ctx context.Context, ids []string) (map[string]*ent.CheckRun, error) {
	out := make(map[string]*ent.CheckRun, len(ids))
	for start := 0; start < len(ids); start += 500 {
		rows, err := b.store.Client.CheckRun.Query().Where(checkrun.IDIn(ids[start:min(start+500, len(ids))]...)).All(ctx)
		if err != nil {
			return nil, apperr.Storage(err, "read the branches' checks")
		}
		for _, c := range rows {
			out[c.ID] = c
		}
	}
	return out, nil
}

// Check is the newest check of the branch's turns, whole (its output
// too); nil when none ran. The first asked reads those of every branch of
// the batch, in one query.
func (br *Branch) Check(ctx context.Context) (*ent.CheckRun, error) {
	if br.Latest == nil || br.checks == nil {
		return br.Latest, nil
	}
	b := br.checks
	b.newestOnce.Do(func() {
		ids := make([]string, 0, len(b.latest))
		for _, c := range b.latest {
			ids = append(ids, c.ID)
		}
		b.newest, b.newestErr = b.rows(ctx, ids)
	})
	if b.newestErr != nil {
		return nil, b.newestErr
	}
	if c := b.newest[br.Latest.ID]; c != nil {
		return c, nil
	}
	return br.Latest, nil // deleted since: what the view read
}

// Checks are the newest checks of the branch's turns, at most
// MaxChecksListed, newest first, whole. The first asked reads those of
// every branch of the batch, in one query.
func (br *Branch) Checks(ctx context.Context) ([]*ent.CheckRun, error) {
	out := []*ent.CheckRun{}
	if br.checks == nil {
		return out, nil
	}
	b := br.checks
	b.listOnce.Do(func() {
		var ids []string
		for _, order := range b.order {
			ids = append(ids, order[:min(len(order), MaxChecksListed)]...)
		}
		rows, err := b.rows(ctx, ids)
		if err != nil {
			b.listErr = err
			return
		}
		b.list = map[string][]*ent.CheckRun{}
		for session, order := range b.order {
			for _, id := range order[:min(len(order), MaxChecksListed)] {
				if c := rows[id]; c != nil {
					b.list[session] = append(b.list[session], c)
				}
			}
		}
	})
	if b.listErr != nil {
		return nil, b.listErr
	}
	return append(out, b.list[br.Row.ChildAgentSessionID]...), nil
}
