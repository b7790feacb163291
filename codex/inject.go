package codex

import (
	"context"

	"tuttid/agent"
)

// Inject implements agent.Runtime: thread/inject_items with one user
// message, after thread/resume when the running app-server has not loaded
// the thread (Codex refuses an unloaded one: "thread not found"). Codex
// keeps the item in the thread's history for its next model request; no
// notification, thread/read or turns/list shows it
// (docs/codex-explore-facts.md). A user message, not a developer one: the
// text comes from another thread's model and must not gain instruction
// authority.
func (r *Runtime) Inject(ctx context.Context, in agent.InjectInput) error {
	if err := checkProvider(in.Provider); err != nil {
		return err
	}
	s, err := r.ready(ctx, in.Settings)
	if err != nil {
		return err
	}
	p, err := r.current()
	if err != nil {
		return err
	}
	params := injectParams{ThreadID: in.ThreadID, Items: []injectItem{{
		Type: "message", Role: "user", Content: []injectContent{{Type: "input_text", Text: in.Text}},
	}}}
	return r.onThread(ctx, p, in.ThreadID, in.Cwd, in.ModelProvider, s, func(loadedThread) error {
		return r.call(ctx, p, "thread/inject_items", params, nil)
	})
}

type injectParams struct {
	ThreadID string       `json:"threadId"`
	Items    []injectItem `json:"items"`
}

type injectItem struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content []injectContent `json:"content"`
}

type injectContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}
