// Package readahead lets one read operation load what it asks of each row
// of a list for the whole list at once. When a client asks, for each row
// of a page (a session's parent, its code, a turn's messages), the first
// such read loads the answer for every row listed with it, in a constant
// number of queries, and the others are served from what it loaded.
//
// It lives for one operation (With), so it is never staler than that
// operation. It knows nothing of what the rows are: callers name their
// kinds of list and the keys of what they load.
package readahead

import (
	"context"
	"sync"
)

// Kind names a kind of list; a row's id is unique within its kind.
type Kind string

// The kinds of list several services read about: one package lists them,
// others load what they own for the same list (the read model lists a
// page of sessions; code branches load those sessions' code rows).
const (
	// Sessions are sessions listed together, scoped by their workspace;
	// ids are session ids.
	Sessions Kind = "sessions"
	// Turns are one session's turns listed together, scoped by the
	// session; ids are TurnMember's.
	Turns Kind = "turns"
)

// TurnMember is a turn's id among listed turns: provider turn ids are
// unique per session only.
func TurnMember(sessionID, turnID string) string { return sessionID + "\x00" + turnID }

// TurnIDs are the provider turn ids of a Turns list.
func TurnIDs(l *List) []string {
	ids := make([]string, len(l.IDs))
	for i, m := range l.IDs {
		ids[i] = m[len(l.Scope)+1:]
	}
	return ids
}

// Op is one operation's read-ahead: the lists read so far and what was
// loaded about them. A nil *Op reads nothing ahead.
type Op struct {
	mu     sync.Mutex
	listOf map[member]*List
}

type member struct {
	kind Kind
	id   string
}

// List is rows read together and what was loaded about them, each value
// once.
type List struct {
	// Scope is what the rows share (a workspace for sessions, a session
	// for turns), for the queries that load them.
	Scope string
	// IDs are the rows' ids, in the order they were listed.
	IDs []string

	mu    sync.Mutex
	slots map[any]*slot
}

type slot struct {
	mu  sync.Mutex
	ok  bool
	val any
}

type opKey struct{}

// With gives one read operation (a GraphQL query or mutation's answer) its
// read-ahead. Long-lived operations (subscriptions) should not have one:
// they would serve later events from their first reads.
func With(ctx context.Context) context.Context {
	return context.WithValue(ctx, opKey{}, &Op{listOf: map[member]*List{}})
}

// From is the operation's read-ahead, or nil.
func From(ctx context.Context) *Op {
	o, _ := ctx.Value(opKey{}).(*Op)
	return o
}

// Listed records rows of one kind read together. A row listed again
// belongs to its latest list.
func (o *Op) Listed(kind Kind, scope string, ids []string) {
	if o == nil || len(ids) == 0 {
		return
	}
	l := &List{Scope: scope, IDs: append([]string(nil), ids...), slots: map[any]*slot{}}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, id := range l.IDs {
		o.listOf[member{kind, id}] = l
	}
}

// ListOf is the list a row came in, or nil (read on its own, or no
// read-ahead).
func (o *Op) ListOf(kind Kind, id string) *List {
	if o == nil {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.listOf[member{kind, id}]
}

// Load returns what load gives for the list under key, loading it once: a
// failed load is not kept, so the next reader tries again (each reports
// its own failure). Loads of different keys run independently.
func Load[T any](l *List, key any, load func() (T, error)) (T, error) {
	l.mu.Lock()
	s := l.slots[key]
	if s == nil {
		s = &slot{}
		l.slots[key] = s
	}
	l.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ok {
		return s.val.(T), nil
	}
	v, err := load()
	if err != nil {
		return v, err
	}
	s.val, s.ok = v, true
	return v, nil
}
