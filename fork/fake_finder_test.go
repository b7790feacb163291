package fork_test

import (
	"context"

	"tuttid/agent"
)

// SetListed sets the threads FindForks reports (newest first, as Codex
// lists them) and whether it fails.
func (f *fakeRuntime) SetListed(threads []agent.ThreadInfo, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.listed, f.listErr = threads, err
}

// Archived returns the thread ids Archive was called with.
func (f *fakeRuntime) Archived() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.archived...)
}

func (f *fakeRuntime) FindForks(ctx context.Context, in agent.FindForksInput) ([]agent.ThreadInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.listErr != nil {
		return nil, f.listErr
	}
	var out []agent.ThreadInfo
	for _, t := range f.listed {
		if t.ForkedFromID == in.ParentThreadID {
			out = append(out, t)
		}
	}
	return out, nil
}

var _ agent.ThreadFinder = (*fakeRuntime)(nil)
