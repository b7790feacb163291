package session

import (
	"context"
	"sync"

	"tuttid/ent"
	"tuttid/paging"
)

// readAhead lets the rows of one list be read about together: when a
// client asks, for each session of a page, for its parent, children,
// display title or messages (or, for each turn of a session, for its
// messages), the first such read loads the answer for the whole list in a
// constant number of queries and the others are served from here. It
// lives for one read operation (WithReadAhead), so it is never stale by
// more than that operation.
type readAhead struct {
	mu       sync.Mutex
	pageOf   map[string]*sessionPage // session id -> the list it came in
	turnsOf  map[turnKey]*turnList   // a listed turn -> the list it came in
	messages map[msgKey]*msgPages
}

// sessionPage is the sessions of one list and what was loaded about them.
// Each load runs once, under the page's own lock.
type sessionPage struct {
	workspaceID string
	ids         []string

	parents     loaded[map[string]*ent.AgentSession]
	children    loaded[map[string][]*ent.AgentSession]
	forkedFrom  loaded[map[string]*ent.SessionFork]
	firstTitles loaded[map[string]string]
	codes       loaded[map[string]*ent.SessionCode]
}

type msgKey struct {
	page *sessionPage
	args pageArgs
}

// pageArgs is a checked page without cursors, to key a map.
type pageArgs struct {
	limit    int
	backward bool
}

type msgPages = loaded[map[string]paging.Page[*ent.Message]]

// turnKey is a turn by session and provider turn id.
type turnKey struct{ session, turn string }

// turnList is turns of one session read together (a page, a list, a
// comparison's side) and their messages once loaded.
type turnList struct {
	sessionID string
	turnIDs   []string
	byTurn    loaded[map[string][]*ent.Message] // by provider turn id
}

// loaded is a value loaded once; a failed load is retried by the next
// reader (each one reports its own failure).
type loaded[T any] struct {
	mu  sync.Mutex
	ok  bool
	val T
}

func (l *loaded[T]) get(load func() (T, error)) (T, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ok {
		return l.val, nil
	}
	v, err := load()
	if err != nil {
		return v, err
	}
	l.val, l.ok = v, true
	return v, nil
}

type readAheadKey struct{}

// WithReadAhead gives one read operation (a GraphQL query or mutation's
// answer) its read-ahead. Long-lived operations (subscriptions) should not
// have one: they would serve later events from their first reads.
func WithReadAhead(ctx context.Context) context.Context {
	return context.WithValue(ctx, readAheadKey{}, &readAhead{
		pageOf: map[string]*sessionPage{}, turnsOf: map[turnKey]*turnList{}, messages: map[msgKey]*msgPages{},
	})
}

func readAheadFrom(ctx context.Context) *readAhead {
	ra, _ := ctx.Value(readAheadKey{}).(*readAhead)
	return ra
}

// listed records sessions read together.
func (ra *readAhead) listed(workspaceID string, sessions []*ent.AgentSession) {
	if ra == nil || len(sessions) == 0 {
		return
	}
	p := &sessionPage{workspaceID: workspaceID, ids: make([]string, len(sessions))}
	for i, a := range sessions {
		p.ids[i] = a.ID
	}
	ra.mu.Lock()
	defer ra.mu.Unlock()
	for _, id := range p.ids {
		ra.pageOf[id] = p
	}
}

// page is the list a session came in, or nil (read on its own).
func (ra *readAhead) page(sessionID string) *sessionPage {
	if ra == nil {
		return nil
	}
	ra.mu.Lock()
	defer ra.mu.Unlock()
	return ra.pageOf[sessionID]
}

// messagePages is the cache of one page's message connections with args.
func (ra *readAhead) messagePages(p *sessionPage, args pageArgs) *msgPages {
	ra.mu.Lock()
	defer ra.mu.Unlock()
	k := msgKey{page: p, args: args}
	if ra.messages[k] == nil {
		ra.messages[k] = &msgPages{}
	}
	return ra.messages[k]
}

// turnsListed records turns read together: the first of them whose
// messages are asked for loads the messages of all of them.
func (ra *readAhead) turnsListed(turns []*ent.Turn) {
	if ra == nil || len(turns) == 0 {
		return
	}
	lists := map[string]*turnList{}
	ra.mu.Lock()
	defer ra.mu.Unlock()
	for _, t := range turns {
		l := lists[t.AgentSessionID]
		if l == nil {
			l = &turnList{sessionID: t.AgentSessionID}
			lists[t.AgentSessionID] = l
		}
		l.turnIDs = append(l.turnIDs, t.TurnID)
		ra.turnsOf[turnKey{t.AgentSessionID, t.TurnID}] = l
	}
}

// turnList is the list a turn came in, or nil (read on its own).
func (ra *readAhead) turnList(t *ent.Turn) *turnList {
	if ra == nil {
		return nil
	}
	ra.mu.Lock()
	defer ra.mu.Unlock()
	return ra.turnsOf[turnKey{t.AgentSessionID, t.TurnID}]
}

// batchable reports whether a message page can be read for many sessions
// at once: the first or last n, without cursors (a list's "last message").
func batchable(w paging.Window) (pageArgs, bool) {
	if w.After != nil || w.Before != nil {
		return pageArgs{}, false
	}
	return pageArgs{limit: w.Limit, backward: w.Backward}, true
}
