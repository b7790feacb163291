package session

import "sync"

// guards serializes the operations that must not interleave on one session
// (a send and a fork of it) or one key (two forks with one request id),
// within this process.
type guards struct {
	mu    sync.Mutex
	locks map[string]*guard
}

type guard struct {
	mu   sync.Mutex
	refs int
}

// Lock holds key until the returned func is called.
func (g *guards) Lock(key string) (unlock func()) {
	g.mu.Lock()
	if g.locks == nil {
		g.locks = map[string]*guard{}
	}
	l := g.locks[key]
	if l == nil {
		l = &guard{}
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
