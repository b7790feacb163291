package sessionread

import (
	"context"

	"tuttid/ent"
	"tuttid/paging"
	"tuttid/readahead"
)

// The rows of one list are read about together (package readahead): when
// a client asks, for each session of a page, for its parent, children,
// display title or messages (or, for each turn of a session, for its
// messages), the first such read loads the answer for the whole list.

// The keys of what is loaded for a list of sessions or turns.
type (
	parentsKey     struct{}
	childrenKey    struct{}
	forkedFromKey  struct{}
	firstTitlesKey struct{}
	turnMessages   struct{}
)

// sessionList is the list a session came in, or nil (read on its own).
func sessionList(ctx context.Context, sessionID string) *readahead.List {
	return readahead.From(ctx).ListOf(readahead.Sessions, sessionID)
}

// sessionsListed records sessions read together.
func sessionsListed(ctx context.Context, workspaceID string, sessions []*ent.AgentSession) {
	ids := make([]string, len(sessions))
	for i, a := range sessions {
		ids[i] = a.ID
	}
	readahead.From(ctx).Listed(readahead.Sessions, workspaceID, ids)
}

// turnsListed records turns read together: the first of them whose
// messages are asked for loads the messages of all of them (one list per
// session).
func turnsListed(ctx context.Context, turns []*ent.Turn) {
	ra := readahead.From(ctx)
	if ra == nil || len(turns) == 0 {
		return
	}
	var order []string
	bySession := map[string][]string{}
	for _, t := range turns {
		if _, ok := bySession[t.AgentSessionID]; !ok {
			order = append(order, t.AgentSessionID)
		}
		bySession[t.AgentSessionID] = append(bySession[t.AgentSessionID], t.TurnID)
	}
	for _, sessionID := range order {
		members := make([]string, len(bySession[sessionID]))
		for i, turnID := range bySession[sessionID] {
			members[i] = readahead.TurnMember(sessionID, turnID)
		}
		ra.Listed(readahead.Turns, sessionID, members)
	}
}

// turnList is the list a turn came in, or nil (read on its own); its
// turn ids are readahead.TurnIDs(l).
func turnList(ctx context.Context, t *ent.Turn) *readahead.List {
	return readahead.From(ctx).ListOf(readahead.Turns, readahead.TurnMember(t.AgentSessionID, t.TurnID))
}

// messagePagesKey keys a list's message pages by the page asked: a
// checked page without cursors.
type messagePagesKey struct {
	limit    int
	backward bool
}

// batchable reports whether a message page can be read for many sessions
// at once: the first or last n, without cursors (a list's "last message").
func batchable(w paging.Window) (messagePagesKey, bool) {
	if w.After != nil || w.Before != nil {
		return messagePagesKey{}, false
	}
	return messagePagesKey{limit: w.Limit, backward: w.Backward}, true
}
