package session

import "sync"

// Guards serializes the operations that must not interleave on one key
// (a send and a fork of one session, two forks with one request id),
// within this process. The zero value is ready to use.
type Guards struct {
	mu    sync.Mutex
	locks map[string]*guard
}

type guard struct {
	mu   sync.Mutex
	refs int
}

// Lock holds key until the returned func is called.
func (g *Guards) Lock(key string) (unlock func()) {
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
