// Package agenttest is the tests' agent.Runtime: one scriptable fake that
// records what it is asked and answers from scripts, for the services'
// tests that need no real provider (fault injection, races, reads).
package agenttest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"tuttid/agent"
)

// ForkAnswer is one scripted answer of Fork.
type ForkAnswer struct {
	Result agent.RuntimeForkResult
	Err    error
}

// Runtime is an agent.Runtime and agent.ThreadFinder. By default every call
// succeeds: Start makes thread-start-<n>, SendTurn answers turn-sent in
// progress, Fork makes ChildThreadID(n) with no history, History answers
// what SetHistory gave (else nothing), RespondToApproval answers
// agent.ErrApprovalNotPending. Every input is recorded. The zero value is
// not usable: call New (or Idle).
type Runtime struct {
	mu sync.Mutex

	refuse error

	starts     []agent.StartInput
	sends      []agent.SendTurnInput
	injected   []agent.InjectInput
	interrupts []agent.InterruptInput
	forkInputs []agent.RuntimeForkInput
	archived   []string

	script       []ForkAnswer
	entered      chan int
	release      chan struct{}
	beforeReturn func()
	forkedAt     time.Time

	histories  map[string][]agent.RuntimeTurn
	archiveErr error
	listed     []agent.ThreadInfo
	listErr    error

	acct accounts // accounts.go

	events chan agent.Event
}

var (
	_ agent.Runtime      = (*Runtime)(nil)
	_ agent.ThreadFinder = (*Runtime)(nil)
)

// ForkedAt is the lineage time Fork's default answer reports.
func ForkedAt() time.Time { return time.UnixMilli(1782892800000) }

// New returns a runtime whose calls succeed.
func New() *Runtime {
	return &Runtime{forkedAt: ForkedAt(), events: make(chan agent.Event), histories: map[string][]agent.RuntimeTurn{}}
}

// Idle returns a runtime for tests that only read: healthy, it archives,
// and refuses to run anything (Start, SendTurn, Interrupt, History, Fork,
// RespondToApproval) with agent.ErrRuntimeUnavailable.
func Idle() *Runtime {
	r := New()
	r.refuse = fmt.Errorf("%w: idle test runtime", agent.ErrRuntimeUnavailable)
	return r
}

// ChildThreadID is the thread id Fork's default answer to call n
// (1-based) returns.
func ChildThreadID(n int) string { return fmt.Sprintf("thread-child-%d", n) }

// Events returns the channel Emit sends on.
func (r *Runtime) Events() <-chan agent.Event { return r.events }

// Emit delivers an event to the runtime's reader (ingestion), waiting for
// it to be taken or ctx to end.
func (r *Runtime) Emit(ctx context.Context, e agent.Event) error {
	select {
	case r.events <- e:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (r *Runtime) Health(context.Context) error { return nil }

func (r *Runtime) Start(_ context.Context, in agent.StartInput) (agent.RuntimeSession, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.starts = append(r.starts, in)
	if r.refuse != nil {
		return agent.RuntimeSession{}, r.refuse
	}
	if err := r.notSignedIn(); err != nil {
		return agent.RuntimeSession{}, err
	}
	return agent.RuntimeSession{ThreadID: fmt.Sprintf("thread-start-%d", len(r.starts)), Status: agent.ThreadIdle, Cwd: in.Cwd}, nil
}

func (r *Runtime) SendTurn(_ context.Context, in agent.SendTurnInput) (agent.RuntimeTurn, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sends = append(r.sends, in)
	if r.refuse != nil {
		return agent.RuntimeTurn{}, r.refuse
	}
	if err := r.notSignedIn(); err != nil {
		return agent.RuntimeTurn{}, err
	}
	return agent.RuntimeTurn{ID: "turn-sent", Status: agent.TurnInProgress}, nil
}

func (r *Runtime) Interrupt(_ context.Context, in agent.InterruptInput) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.interrupts = append(r.interrupts, in)
	return r.refuse
}

func (r *Runtime) History(_ context.Context, in agent.HistoryInput) ([]agent.RuntimeTurn, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.refuse != nil {
		return nil, r.refuse
	}
	return r.histories[in.ThreadID], nil
}

// Review answers "reviewed: " and the instructions.
func (r *Runtime) Review(_ context.Context, in agent.ReviewInput) (string, error) {
	return "reviewed: " + in.Instructions, nil
}

// Inject records in; Injected lists what it got.
func (r *Runtime) Inject(_ context.Context, in agent.InjectInput) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.refuse != nil {
		return r.refuse
	}
	r.injected = append(r.injected, in)
	return nil
}

// Injected is what Inject got, oldest first.
func (r *Runtime) Injected() []agent.InjectInput {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]agent.InjectInput(nil), r.injected...)
}

func (r *Runtime) Archive(_ context.Context, _, providerSessionID string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.archiveErr != nil {
		return r.archiveErr
	}
	r.archived = append(r.archived, providerSessionID)
	return nil
}

func (r *Runtime) RespondToApproval(context.Context, agent.ApprovalResponse) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.refuse != nil {
		return r.refuse
	}
	return agent.ErrApprovalNotPending
}

// FindForks lists the threads SetListed gave that were forked from the
// source thread.
func (r *Runtime) FindForks(_ context.Context, in agent.FindForksInput) ([]agent.ThreadInfo, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.listErr != nil {
		return nil, r.listErr
	}
	var out []agent.ThreadInfo
	for _, t := range r.listed {
		if t.ForkedFromID == in.ParentThreadID {
			out = append(out, t)
		}
	}
	return out, nil
}
