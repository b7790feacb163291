package fork_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	"tuttid/agent"
)

// forkScript is one scripted answer of fakeRuntime.Fork.
type forkScript struct {
	Result agent.RuntimeForkResult
	Err    error
}

// fakeRuntime is an agent.Runtime for fault injection. Fork records its
// inputs and answers from a script (then a default: a new child thread id,
// no provider history); it can be made to block until released, to hold a
// fork in flight while a concurrent one arrives. The other methods return
// simple values.
type fakeRuntime struct {
	mu          sync.Mutex
	forkInputs  []agent.RuntimeForkInput
	script      []forkScript
	archived    []string
	threads     int
	listed      []agent.ThreadInfo // FindForks' answer
	listErr     error
	failArchive error // Archive's answer when set

	// entered, when set, gets the call number (1-based) of every Fork call
	// as it starts; it must be buffered enough for the calls of a test.
	entered chan int
	// release, when set, holds every Fork call until it is closed (or the
	// call's context ends).
	release chan struct{}

	// beforeReturn, when set, runs as Fork returns its answer.
	beforeReturn func()

	// forkedAt is the lineage time the default answer reports.
	forkedAt time.Time

	events chan agent.Event
}

func newFakeRuntime() *fakeRuntime {
	return &fakeRuntime{
		forkedAt: time.UnixMilli(1782892800000),
		events:   make(chan agent.Event),
	}
}

// Script queues answers for the next Fork calls, in order.
func (f *fakeRuntime) Script(s ...forkScript) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.script = append(f.script, s...)
}

// ForkInputs returns a copy of what Fork was called with, in call order.
func (f *fakeRuntime) ForkInputs() []agent.RuntimeForkInput {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]agent.RuntimeForkInput(nil), f.forkInputs...)
}

// ForkCalls is the number of Fork calls so far.
func (f *fakeRuntime) ForkCalls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.forkInputs)
}

// ChildThreadID is the thread id the default answer of call n (1-based)
// returns.
func ChildThreadID(n int) string { return fmt.Sprintf("thread-child-%d", n) }

func (f *fakeRuntime) Fork(ctx context.Context, in agent.RuntimeForkInput) (agent.RuntimeForkResult, error) {
	f.mu.Lock()
	f.forkInputs = append(f.forkInputs, in)
	n := len(f.forkInputs)
	var s *forkScript
	if len(f.script) > 0 {
		s = &f.script[0]
		f.script = f.script[1:]
	}
	entered, release, beforeReturn := f.entered, f.release, f.beforeReturn
	f.mu.Unlock()
	if beforeReturn != nil {
		defer beforeReturn()
	}

	if entered != nil {
		entered <- n
	}
	if release != nil {
		select {
		case <-release:
		case <-ctx.Done():
			return agent.RuntimeForkResult{}, fmt.Errorf("%w: %w", agent.ErrRuntimeUnavailable, ctx.Err())
		}
	}
	if s != nil {
		return s.Result, s.Err
	}
	return agent.RuntimeForkResult{
		Session: agent.RuntimeSession{
			ThreadID: ChildThreadID(n), Status: agent.ThreadIdle, Cwd: in.Cwd,
			Model: in.Settings.Model, ForkedFromID: in.ParentThreadID,
		},
		Fork: agent.RuntimeForkLineage{
			ParentThreadID: in.ParentThreadID, ChildThreadID: ChildThreadID(n),
			Provider: in.Provider, LastTurnID: in.LastTurnID, ForkedAt: f.forkedAt,
		},
	}, nil
}

func (f *fakeRuntime) Start(ctx context.Context, in agent.StartInput) (agent.RuntimeSession, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.threads++
	return agent.RuntimeSession{ThreadID: fmt.Sprintf("thread-start-%d", f.threads), Status: agent.ThreadIdle, Cwd: in.Cwd}, nil
}

func (f *fakeRuntime) SendTurn(ctx context.Context, in agent.SendTurnInput) (agent.RuntimeTurn, error) {
	return agent.RuntimeTurn{ID: "turn-sent", Status: agent.TurnInProgress}, nil
}

func (f *fakeRuntime) Interrupt(ctx context.Context, in agent.InterruptInput) error { return nil }

func (f *fakeRuntime) History(ctx context.Context, in agent.HistoryInput) ([]agent.RuntimeTurn, error) {
	return nil, nil
}

func (f *fakeRuntime) Archive(ctx context.Context, provider, providerSessionID string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failArchive != nil {
		return f.failArchive
	}
	f.archived = append(f.archived, providerSessionID)
	return nil
}

func (f *fakeRuntime) Events() <-chan agent.Event { return f.events }

func (f *fakeRuntime) Health(ctx context.Context) error { return nil }

func (f *fakeRuntime) RespondToApproval(ctx context.Context, in agent.ApprovalResponse) error {
	return agent.ErrApprovalNotPending
}

var _ agent.Runtime = (*fakeRuntime)(nil)

// historyIf is a stream of turns when available, else no history.
func historyIf(available bool, turns []agent.RuntimeTurn) agent.HistoryStream {
	if !available {
		return nil
	}
	return agent.SliceHistory(turns, 0)
}
