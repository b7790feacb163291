package agenttest

import (
	"context"
	"fmt"

	"tuttid/agent"
)

// Fork records its input and answers from the script (ScriptForks), else
// with a new child thread and no provider history. HoldForks can keep it
// in flight.
func (r *Runtime) Fork(ctx context.Context, in agent.RuntimeForkInput) (agent.RuntimeForkResult, error) {
	r.mu.Lock()
	r.forkInputs = append(r.forkInputs, in)
	n := len(r.forkInputs)
	var answer *ForkAnswer
	if len(r.script) > 0 {
		answer = &r.script[0]
		r.script = r.script[1:]
	}
	refuse, entered, release, beforeReturn := r.refuse, r.entered, r.release, r.beforeReturn
	if refuse == nil {
		refuse = r.notSignedIn()
	}
	r.mu.Unlock()
	if refuse != nil {
		return agent.RuntimeForkResult{}, refuse
	}
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
	if answer != nil {
		return answer.Result, answer.Err
	}
	return agent.RuntimeForkResult{
		Session: agent.RuntimeSession{
			ThreadID: ChildThreadID(n), Status: agent.ThreadIdle, Cwd: in.Cwd,
			Model: in.Settings.Model, ForkedFromID: in.ParentThreadID,
		},
		Fork: agent.RuntimeForkLineage{
			ParentThreadID: in.ParentThreadID, ChildThreadID: ChildThreadID(n),
			Provider: in.Provider, LastTurnID: in.LastTurnID, ForkedAt: r.forkedAt,
		},
	}, nil
}

// ScriptForks queues answers for the next Fork calls, in order.
func (r *Runtime) ScriptForks(answers ...ForkAnswer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.script = append(r.script, answers...)
}

// HoldForks makes every later Fork call send its call number (1-based) on
// the returned channel as it starts (buffered for calls calls) and wait
// until release is called or its context ends: a fork in flight while a
// concurrent one arrives.
func (r *Runtime) HoldForks(calls int) (entered <-chan int, release func()) {
	ch := make(chan int, calls)
	rel := make(chan struct{})
	r.mu.Lock()
	defer r.mu.Unlock()
	r.entered, r.release = ch, rel
	return ch, func() { close(rel) }
}

// BeforeForkReturns runs fn as each later Fork call returns its answer.
func (r *Runtime) BeforeForkReturns(fn func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.beforeReturn = fn
}
