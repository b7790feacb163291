// Package keylock serializes, within this process, the operations that
// must not interleave on one key (a send and a fork of one session, two
// forks with one request id).
package keylock

import "sync"

// Locks holds one mutex per key in use. The zero value is ready to use.
type Locks struct {
	mu    sync.Mutex
	locks map[string]*entry
}

type entry struct {
	mu   sync.Mutex
	refs int
}

// Lock holds key until the returned func is called. A key's mutex exists
// only while someone holds or waits for it.
func (g *Locks) Lock(key string) (unlock func()) {
	g.mu.Lock()
	if g.locks == nil {
		g.locks = map[string]*entry{}
	}
	l := g.locks[key]
	if l == nil {
		l = &entry{}
		g.locks[key] = l
	}
	l.refs++
	g.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		g.mu.Lock()
		if l.refs--; l.refs == 0 {
			delete(g.locks, key)
		}
		g.mu.Unlock()
	}
}
