package keylock

import "sync"

// RWLocks holds one reader/writer lock per key in use: many readers of a
// key at once, or one writer. The zero value is ready to use.
type RWLocks struct {
	mu    sync.Mutex
	locks map[string]*rwEntry
}

type rwEntry struct {
	mu   sync.RWMutex
	refs int
}

// Lock holds key alone until the returned func is called.
func (g *RWLocks) Lock(key string) (unlock func()) {
	l := g.acquire(key)
	l.mu.Lock()
	return func() { l.mu.Unlock(); g.release(key, l) }
}

// RLock holds key shared with other readers until the returned func is
// called.
func (g *RWLocks) RLock(key string) (unlock func()) {
	l := g.acquire(key)
	l.mu.RLock()
	return func() { l.mu.RUnlock(); g.release(key, l) }
}

func (g *RWLocks) acquire(key string) *rwEntry {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.locks == nil {
		g.locks = map[string]*rwEntry{}
	}
	l := g.locks[key]
	if l == nil {
		l = &rwEntry{}
		g.locks[key] = l
	}
	l.refs++
	return l
}

func (g *RWLocks) release(key string, l *rwEntry) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if l.refs--; l.refs == 0 {
		delete(g.locks, key)
	}
}
