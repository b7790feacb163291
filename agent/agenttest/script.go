package agenttest

import "tuttid/agent"

// SetHistory makes History answer turns for a thread.
func (r *Runtime) SetHistory(thread string, turns []agent.RuntimeTurn) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.histories[thread] = turns
}

// FailArchive makes Archive fail with err (nil: succeed again).
func (r *Runtime) FailArchive(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.archiveErr = err
}

// SetListed sets the threads FindForks reports (newest first, as Codex
// lists them) and whether it fails.
func (r *Runtime) SetListed(threads []agent.ThreadInfo, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.listed, r.listErr = threads, err
}

// Started returns what Start was called with, in call order.
func (r *Runtime) Started() []agent.StartInput { return snapshot(r, &r.starts) }

// Sent returns what SendTurn was called with, in call order.
func (r *Runtime) Sent() []agent.SendTurnInput { return snapshot(r, &r.sends) }

// Interrupted returns what Interrupt was called with, in call order.
func (r *Runtime) Interrupted() []agent.InterruptInput { return snapshot(r, &r.interrupts) }

// ForkInputs returns what Fork was called with, in call order.
func (r *Runtime) ForkInputs() []agent.RuntimeForkInput { return snapshot(r, &r.forkInputs) }

// ForkCalls is the number of Fork calls so far.
func (r *Runtime) ForkCalls() int { return len(r.ForkInputs()) }

// Archived returns the thread ids Archive archived, in call order.
func (r *Runtime) Archived() []string { return snapshot(r, &r.archived) }

func snapshot[T any](r *Runtime, s *[]T) []T {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]T(nil), (*s)...)
}
