package codebranch

import (
	"context"
	"sync"

	"tuttid/gitrepo"
)

// A request that reads many sessions of one checkout (the GUI's session
// list asks each session's changes) reads the SHARED sessions' changes
// once: they are the checkout's files against its HEAD, the same for
// every SHARED session working in it. Without it a list of 200 sessions
// of one repository ran 200 snapshots of the same files.

type readMemoKey struct{}

// readMemo holds, for one request, the SHARED changes read by checkout.
type readMemo struct {
	mu    sync.Mutex
	diffs map[string]*memoDiff
}

type memoDiff struct {
	once sync.Once
	d    gitrepo.Diff
	err  error
}

// WithReadMemo returns a context whose reads of SHARED sessions' changes
// are made once per checkout (graph gives one to each query; not to a
// mutation, which may change the files it reads again).
func WithReadMemo(ctx context.Context) context.Context {
	return context.WithValue(ctx, readMemoKey{}, &readMemo{diffs: map[string]*memoDiff{}})
}

// memoized runs read once per key in a request with a read memo, else
// every time.
func memoized(ctx context.Context, key string, read func() (gitrepo.Diff, error)) (gitrepo.Diff, error) {
	m, _ := ctx.Value(readMemoKey{}).(*readMemo)
	if m == nil {
		return read()
	}
	m.mu.Lock()
	e := m.diffs[key]
	if e == nil {
		e = &memoDiff{}
		m.diffs[key] = e
	}
	m.mu.Unlock()
	e.once.Do(func() { e.d, e.err = read() })
	return e.d, e.err
}
