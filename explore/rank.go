package explore

import (
	"cmp"
	"context"
	"slices"

	"tuttid/ent/checkrun"
	"tuttid/ent/turn"
)

// Ranking is the branches best first: those that can still win by
// standing (rank 1 up), then the failed and archived ones in input order.
func (v *View) Ranking(ctx context.Context) ([]*Branch, error) {
	if err := v.Stand(ctx); err != nil {
		return nil, err
	}
	out := slices.Clone(v.Branches)
	slices.SortStableFunc(out, func(a, b *Branch) int {
		return cmp.Compare(rankOrZeroLast(a), rankOrZeroLast(b))
	})
	return out, nil
}

func rankOrZeroLast(b *Branch) int {
	if b.Rank == 0 {
		return 1 << 30
	}
	return b.Rank
}

// rank sets each branch's Rank: first how its latest turn ended (one that
// completed with a change, or still runs, before one that completed with
// no change, before one whose turn failed, was interrupted or never ran:
// a branch that did nothing never ranks above one that did the work and
// passed); then the check passed first (a check not run or still running
// next, a failed one last); then the smaller change (files, then lines
// added and deleted; unread changes after read ones); then fewer tokens;
// then less time; the name breaks ties. Failed, archived and stopped
// (never started) branches get no rank. Every key is a field the person
// sees.
func rank(branches []*Branch) {
	var ranked []*Branch
	for _, b := range branches {
		b.Rank = 0
		if b.State != BranchFailed && b.State != BranchArchived && b.State != BranchStopped {
			ranked = append(ranked, b)
		}
	}
	slices.SortFunc(ranked, compareBranches)
	for i, b := range ranked {
		b.Rank = i + 1
	}
}

func compareBranches(a, b *Branch) int {
	return cmp.Or(
		cmp.Compare(outcomeStanding(a), outcomeStanding(b)),
		cmp.Compare(checkStanding(a), checkStanding(b)),
		cmp.Compare(changeKey(a, 0), changeKey(b, 0)),
		cmp.Compare(changeKey(a, 1), changeKey(b, 1)),
		cmp.Compare(a.TokensUsed, b.TokensUsed),
		cmp.Compare(a.Duration, b.Duration),
		cmp.Compare(a.Row.Name, b.Row.Name),
	)
}

// outcomeStanding: 0 for a branch whose latest turn completed with a
// change, or that has not ended (its turn runs or waits); 1 completed
// with no change (or one not read); 2 failed, interrupted, or no turn.
func outcomeStanding(b *Branch) int {
	switch {
	case b.State == BranchRunning || b.State == BranchQueued || b.State == BranchForking || b.LastTurn == turn.StatusIN_PROGRESS:
		return 0
	case b.LastTurn != turn.StatusCOMPLETED:
		return 2
	case b.Changes == nil || b.Changes.Files == 0:
		return 1
	}
	return 0
}

// checkStanding: 0 passed, 1 not run or running, 2 anything else.
func checkStanding(b *Branch) int {
	switch {
	case b.Latest == nil || b.Latest.State == checkrun.StateRunning || b.Latest.State == checkrun.StateInterrupted:
		return 1
	case b.Latest.State == checkrun.StatePassed:
		return 0
	}
	return 2
}

// changeKey is the change's files (part 0) or lines (part 1); unread
// changes sort last.
func changeKey(b *Branch, part int) int {
	if b.Changes == nil {
		return 1 << 30
	}
	if part == 0 {
		return b.Changes.Files
	}
	return b.Changes.Added + b.Changes.Deleted
}
