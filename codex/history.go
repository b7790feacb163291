package codex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"tuttid/agent"
)

// maxHistoryPages bounds how many thread/turns/list pages a history read
// follows.
const maxHistoryPages = 10000

// historyPageBytes is the size a thread/turns/list page aims at. Codex
// replays the whole rollout for every page (its handler rebuilds the turn
// list, then slices it), so each page costs a read of the whole thread:
// few pages are cheap, but a page is one JSON line held in memory, three
// times over while decoded. See DEVELOPERS.md for the measurements.
const historyPageBytes = 4 << 20

// forkStreamAboveBytes: a fork whose parent holds more bytes of items
// asks thread/fork for the turns and decodes its reply as it streams in
// (forkreply.go); a smaller one forks with excludeTurns and reads the
// child in thread/turns/list pages. Measured on the real app-server
// (rt.Fork and the history read, alternating, three rounds): 100 small
// turns (41 KB) 83-115 ms paged against 77-210 ms streamed; 1,000 small
// turns (411 KB) 2.5-5.5 s paged (ten pages, each replaying the rollout)
// against 2.7-3.5 s streamed; 80 MB streamed is faster than a raw fork.
const forkStreamAboveBytes = 128 << 10

// firstPageTurns is the first page's limit, before any turn's size is
// known: one turn of a real session can be 5 MB.
const firstPageTurns = 2

// listParams are thread/turns/list's params.
type listParams struct {
	ThreadID      string  `json:"threadId"`
	Cursor        *string `json:"cursor,omitempty"`
	Limit         int     `json:"limit"`
	SortDirection string  `json:"sortDirection"`
	ItemsView     string  `json:"itemsView"`
}

// rawTurnsPage is a thread/turns/list page with its turns kept as raw
// JSON, so that their size steers the next page's limit.
type rawTurnsPage struct {
	Data       []json.RawMessage `json:"data"`
	NextCursor *string           `json:"nextCursor"`
}

type pageResult struct {
	turns []agent.RuntimeTurn
	next  listParams // the page after this one; no Cursor when there is none
	err   error
}

// historyStream reads a thread's turns page by page, oldest first, with
// the next page read while the caller stores the current one (at most one
// page in flight, so at most two alive).
type historyStream struct {
	r        *Runtime
	p        *process
	threadID string
	params   listParams
	pages    int
	turns    int // turns delivered so far
	// onEmpty, when set, decides what an empty history means: its error
	// replaces io.EOF.
	onEmpty func(ctx context.Context) error
	// bothEnds: the history is known to be small, so the first read asks
	// for its oldest and its newest half at once (see readBothEnds).
	bothEnds bool

	ctx      context.Context // the reads in flight; cancelled by Close
	cancel   context.CancelFunc
	inflight chan pageResult // nil when no read is running
	done     bool            // the last page was read (or failed)
}

func (r *Runtime) newHistoryStream(ctx context.Context, p *process, threadID string) *historyStream {
	sctx, cancel := context.WithCancel(ctx)
	return &historyStream{
		r: r, p: p, threadID: threadID, ctx: sctx, cancel: cancel,
		params: listParams{ThreadID: threadID, Limit: min(firstPageTurns, r.pageSize), SortDirection: "asc", ItemsView: "full"},
	}
}

// Next implements agent.HistoryStream.
func (h *historyStream) Next(ctx context.Context) ([]agent.RuntimeTurn, error) {
	if h.inflight == nil {
		if h.done {
			return nil, io.EOF
		}
		h.start()
	}
	var res pageResult
	select {
	case res = <-h.inflight:
		h.inflight = nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if res.err != nil {
		h.done = true
		if errors.Is(res.err, io.EOF) && h.turns == 0 && h.onEmpty != nil {
			return nil, h.onEmpty(ctx)
		}
		return nil, res.err
	}
	h.turns += len(res.turns)
	h.params = res.next
	if h.params.Cursor == nil {
		h.done = true
	} else {
		h.start() // read ahead while the caller stores this page
	}
	return res.turns, nil
}

// start reads the next page in the background.
func (h *historyStream) start() {
	ch := make(chan pageResult, 1)
	h.inflight = ch
	h.pages++
	if h.pages > maxHistoryPages {
		ch <- pageResult{err: fmt.Errorf("codex thread/turns/list: thread %s has more than %d pages of turns", h.threadID, maxHistoryPages)}
		return
	}
	params, first := h.params, h.pages == 1
	go func() {
		read := h.readPage
		if first && h.bothEnds {
			read = h.readBothEnds
		}
		turns, next, err := read(params, first)
		ch <- pageResult{turns: turns, next: next, err: err}
	}()
}

// readPage reads one page; np are the params of the page after it, with
// an empty Cursor when there is none.
func (h *historyStream) readPage(params listParams, first bool) (turns []agent.RuntimeTurn, np listParams, err error) {
	np = params
	np.Cursor = nil
	var page rawTurnsPage
	err = h.r.call(h.ctx, h.p, "thread/turns/list", params, &page)
	switch {
	case errors.Is(err, errNotMaterialized):
		// A thread before its first turn has no rollout yet.
		return nil, np, io.EOF
	case errors.Is(err, errMethodUnsupported) && first:
		var read wireThreadRead
		if err := h.r.call(h.ctx, h.p, "thread/read", map[string]any{"threadId": h.threadID, "includeTurns": true}, &read); err != nil {
			return nil, np, err
		}
		if len(read.Thread.Turns) == 0 {
			return nil, np, io.EOF
		}
		return projectTurns(read.Thread.Turns), np, nil
	case err != nil:
		return nil, np, err
	}
	if len(page.Data) == 0 {
		return nil, np, io.EOF
	}
	size := 0
	turns = make([]agent.RuntimeTurn, 0, len(page.Data))
	for i, raw := range page.Data {
		size += len(raw)
		var t wireTurn
		if err := json.Unmarshal(raw, &t); err != nil {
			return nil, np, fmt.Errorf("codex thread/turns/list: turn %d of thread %s: %w", i, h.threadID, err)
		}
		page.Data[i] = nil // let the raw bytes go as the turns are projected
		turns = append(turns, projectTurn(t))
	}
	if page.NextCursor != nil && *page.NextCursor != "" {
		np.Cursor = page.NextCursor
		np.Limit = nextLimit(size, len(turns), h.r.pageBytes, h.r.pageSize)
	}
	return turns, np, nil
}

// readBothEnds reads a small history's first page as its oldest half and
// its newest half at once (ascending and descending): Codex builds a page's
// items on more than one core, so two half pages take about the time of
// one (measured: 100 small turns of a fork child, 80 ms in one page, 45 ms
// in two halves at once). The halves are joined only when Codex says they
// meet (the turn after the oldest half is the newest half's first); else
// the newest half is dropped and the history goes on in ascending pages.
func (h *historyStream) readBothEnds(params listParams, first bool) ([]agent.RuntimeTurn, listParams, error) {
	half := max(params.Limit/2, 1)
	newest := params
	newest.SortDirection, newest.Limit = "desc", params.Limit-half
	params.Limit = half
	type result struct {
		turns []agent.RuntimeTurn
		err   error
	}
	tail := make(chan result, 1)
	go func() {
		turns, _, err := h.readPage(newest, false)
		tail <- result{turns, err}
	}()
	turns, next, err := h.readPage(params, first)
	end := <-tail
	if err != nil || next.Cursor == nil || end.err != nil || len(end.turns) == 0 {
		// All of it in the oldest half, or no newest half to join.
		return turns, next, err
	}
	slices.Reverse(end.turns)
	after, err := h.turnAfter(next.Cursor)
	if err != nil {
		return turns, next, nil // the ascending pages go on
	}
	for i, t := range end.turns {
		if t.ID == after {
			done := next
			done.Cursor = nil
			return append(turns, end.turns[i:]...), done, nil
		}
	}
	return turns, next, nil // a gap between the halves: read on in order
}

// turnAfter is the id of the turn a cursor points at, read without items.
func (h *historyStream) turnAfter(cursor *string) (string, error) {
	var page struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	params := listParams{ThreadID: h.threadID, Cursor: cursor, Limit: 1, SortDirection: "asc", ItemsView: "notLoaded"}
	if err := h.r.call(h.ctx, h.p, "thread/turns/list", params, &page); err != nil {
		return "", err
	}
	if len(page.Data) == 0 {
		return "", io.EOF
	}
	return page.Data[0].ID, nil
}

// nextLimit sizes the next page from this one's bytes per turn, so that a
// page stays near target bytes: between 1 and most turns.
func nextLimit(bytes, turns, target, most int) int {
	if turns == 0 || bytes <= 0 {
		return most
	}
	perTurn := (bytes + turns - 1) / turns
	return min(max(target/perTurn, 1), most)
}

// Close implements agent.HistoryStream: the read in flight is cancelled
// and waited for, so no page outlives the stream.
func (h *historyStream) Close() {
	h.cancel()
	if h.inflight != nil {
		<-h.inflight
		h.inflight = nil
	}
	h.done = true
}
