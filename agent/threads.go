package agent

import (
	"context"
	"errors"
	"time"
)

// ErrRequestLost: the provider went away (crashed, or did not answer in
// time) after the request may have reached it, so whether it acted on the
// request is unknown. It wraps the underlying error (often
// ErrRuntimeUnavailable or a deadline).
var ErrRequestLost = errors.New("provider lost the request")

// ThreadFinder is implemented by runtimes that can list their provider
// threads. The fork journal uses it to find a child thread whose id a crash
// (or a lost reply) kept tuttid from recording.
type ThreadFinder interface {
	FindForks(ctx context.Context, in FindForksInput) ([]ThreadInfo, error)
}

// FindForksInput selects the threads forked from one thread.
type FindForksInput struct {
	Provider       string
	ParentThreadID string
	// Cwd is the parent's working directory; the provider filters by it.
	Cwd string
	// CreatedAfter drops older threads (the provider may round times down).
	CreatedAfter time.Time
	// Archived lists the archived threads instead of the live ones.
	Archived bool
}

// ThreadInfo is a provider thread as a listing shows it.
type ThreadInfo struct {
	ThreadID     string
	ForkedFromID string
	Cwd          string
	CreatedAt    time.Time
}
