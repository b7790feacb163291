package sessionread

import (
	"context"
	"slices"
	"strconv"
	"time"

	"entgo.io/ent/dialect/sql"

	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/ent/message"
	"tuttid/ent/predicate"
	"tuttid/ent/turn"
	"tuttid/lineage"
	"tuttid/paging"
)

// Bounds on what one read of a session's turns answers: a real session's
// turns can hold tens of megabytes (tool output, long replies).
const (
	// MaxTurnList is the most turns an unpaged list answers.
	MaxTurnList = paging.MaxPage
	// MaxTurnListBytes bounds the messages of a turn list (text and
	// content); over it the list fails rather than answer a partial one.
	MaxTurnListBytes = 16 << 20
	// TurnPageBytes is where a page of turns with their messages stops
	// adding turns (it always has at least one).
	TurnPageBytes = 4 << 20
)

// TurnArgs says which turns of a session to read.
type TurnArgs struct {
	paging.Args
	// WithMessages says each turn's messages will be read too: their size
	// then bounds the answer.
	WithMessages bool
}

// TurnPage pages through a session's turns, oldest first. With messages,
// a page ends early once its turns' messages exceed TurnPageBytes (Relay
// allows fewer rows than asked; the flag in the direction of travel says
// there are more).
func (s *Reader) TurnPage(ctx context.Context, sessionID string, args TurnArgs) (paging.Page[*ent.Turn], error) {
	w, err := args.Check("t")
	if err != nil {
		return paging.Page[*ent.Turn]{}, err
	}
	q, err := turnWindow(s.store.Client.Turn.Query().Where(turn.AgentSessionID(sessionID), listed()), w)
	if err != nil {
		return paging.Page[*ent.Turn]{}, err
	}
	total := 0
	if !args.SkipTotal {
		if total, err = s.store.Client.Turn.Query().Where(turn.AgentSessionID(sessionID), listed()).Count(ctx); err != nil {
			return paging.Page[*ent.Turn]{}, apperr.Storage(err, "count turns")
		}
	}
	rows, err := q.Limit(w.Limit + 1).All(ctx)
	if err != nil {
		return paging.Page[*ent.Turn]{}, apperr.Storage(err, "read turns")
	}
	if args.WithMessages && w.Limit > 0 && len(rows) > 0 {
		n := min(len(rows), w.Limit)
		sizes, err := s.turnSizes(ctx, sessionID, rows[:n])
		if err != nil {
			return paging.Page[*ent.Turn]{}, err
		}
		// rows are in the direction of travel: keep the nearest turns
		// within the budget, at least one, and say there are more.
		if k := withinBudget(rows[:n], sizes, TurnPageBytes); k < n {
			w.Limit, rows = k, rows[:k+1]
		}
	}
	p := paging.NewPage(rows, w, total, turnCursor)
	turnsListed(ctx, p.Nodes)
	return p, nil
}

// Turns lists a session's turns, oldest first: all of them (at most
// MaxTurnList), or the window args give. It never answers a partial list:
// over its bounds it fails with result_too_large.
func (s *Reader) Turns(ctx context.Context, sessionID string, args TurnArgs) ([]*ent.Turn, error) {
	w, err := args.Check("t")
	if err != nil {
		return nil, err
	}
	all := args.First == nil && args.Last == nil
	if all {
		w.Limit = MaxTurnList
	}
	q, err := turnWindow(s.store.Client.Turn.Query().Where(turn.AgentSessionID(sessionID), listed()), w)
	if err != nil {
		return nil, err
	}
	rows, err := q.Limit(w.Limit + 1).All(ctx)
	if err != nil {
		return nil, apperr.Storage(err, "read turns")
	}
	if len(rows) > w.Limit {
		if all {
			return nil, apperr.New(apperr.ResultTooLarge,
				"the session has more than %d turns: read them in pages with turnConnection, or pass first or last", MaxTurnList)
		}
		rows = rows[:w.Limit]
	}
	if args.WithMessages && len(rows) > 0 {
		sizes, err := s.turnSizes(ctx, sessionID, rows)
		if err != nil {
			return nil, err
		}
		if totalSize(sizes) > MaxTurnListBytes {
			return nil, apperr.New(apperr.ResultTooLarge,
				"these turns' messages hold more than %d MiB: read them in pages with turnConnection", MaxTurnListBytes>>20)
		}
	}
	if w.Backward {
		slices.Reverse(rows)
	}
	turnsListed(ctx, rows)
	return rows, nil
}

// turnWindow orders a session's turns by (started_at, id) in the
// direction of travel, after and before the window's cursors.
func turnWindow(q *ent.TurnQuery, w paging.Window) (*ent.TurnQuery, error) {
	if w.After != nil {
		rowID, err := cursorRowID(w.AfterID)
		if err != nil {
			return nil, err
		}
		at := time.Unix(0, *w.After).UTC()
		q.Where(turn.Or(turn.StartedAtGT(at), turn.And(turn.StartedAtEQ(at), turn.IDGT(rowID))))
	}
	if w.Before != nil {
		rowID, err := cursorRowID(w.BeforeID)
		if err != nil {
			return nil, err
		}
		at := time.Unix(0, *w.Before).UTC()
		q.Where(turn.Or(turn.StartedAtLT(at), turn.And(turn.StartedAtEQ(at), turn.IDLT(rowID))))
	}
	order := sql.OrderAsc
	if w.Backward {
		order = sql.OrderDesc
	}
	return q.Order(turn.ByStartedAt(order()), turn.ByID(order())), nil
}

// turnCursor is a turn's place in the list: its start time, with its row
// id (not its provider turn id) to break ties.
func turnCursor(t *ent.Turn) string {
	return paging.KeyedCursor("t", t.StartedAt.UnixNano(), strconv.Itoa(t.ID))
}

func cursorRowID(s string) (int, error) {
	rowID, err := strconv.Atoi(s)
	if err != nil {
		return 0, apperr.New(apperr.InvalidInput, "cursor is not a cursor of this list")
	}
	return rowID, nil
}

// turnSizes returns, by provider turn id, the bytes of text and content of
// each turn's messages, without reading them into memory.
func (s *Reader) turnSizes(ctx context.Context, sessionID string, turns []*ent.Turn) (map[string]int64, error) {
	ids := make([]string, len(turns))
	for i, t := range turns {
		ids[i] = t.TurnID
	}
	var rows []struct {
		TurnID string `json:"turn_id"`
		Bytes  int64  `json:"bytes"`
	}
	err := s.store.Client.Message.Query().
		Where(message.AgentSessionID(sessionID), message.TurnIDIn(ids...)).
		GroupBy(message.FieldTurnID).
		Aggregate(func(sel *sql.Selector) string {
			return sql.As("COALESCE(SUM(octet_length("+sel.C(message.FieldText)+")) + SUM(COALESCE(octet_length("+
				sel.C(message.FieldContent)+"), 0)), 0)", "bytes")
		}).Scan(ctx, &rows)
	if err != nil {
		return nil, apperr.Storage(err, "size the turns' messages")
	}
	out := make(map[string]int64, len(rows))
	for _, r := range rows {
		out[r.TurnID] = r.Bytes
	}
	return out, nil
}

// withinBudget is how many of turns, from the first, fit in budget bytes
// of messages; at least one.
func withinBudget(turns []*ent.Turn, sizes map[string]int64, budget int64) int {
	var used int64
	for i, t := range turns {
		if used += sizes[t.TurnID]; used > budget {
			return max(i, 1)
		}
	}
	return len(turns)
}

func totalSize(sizes map[string]int64) (n int64) {
	for _, b := range sizes {
		n += b
	}
	return n
}

// listed leaves out a turn stored pending before turn/start
// (store_turn_pending.go): it is tuttid's crash-safety record until Codex
// names the turn, and an id a client read then would vanish a moment later.
func listed() predicate.Turn { return lineage.ListedTurn() }
