package codex

import (
	"context"
	"errors"
	"fmt"
	"time"

	"tuttid/agent"
)

// Review implements agent.Runtime: review/start with a custom target on a
// throwaway fork of the thread, then the review turn's text, read back
// with thread/turns/list once the turn ended (read back, a review turn is
// one agentMessage holding the formatted review; docs/codex-explore-facts.md).
// A review becomes part of the thread it runs on (the thread's next model
// request carries it), hence the fork; the fork is read-only, asks
// nothing, and is archived afterwards.
func (r *Runtime) Review(ctx context.Context, in agent.ReviewInput) (string, error) {
	if err := checkProvider(in.Provider); err != nil {
		return "", err
	}
	settings := in.Settings
	settings.PermissionModeID = agent.PermissionReadOnly
	hidden := false
	rf, err := r.Fork(ctx, agent.RuntimeForkInput{Provider: in.Provider, ParentThreadID: in.ThreadID, Cwd: in.Cwd,
		Settings: settings, ModelProvider: in.ModelProvider, Visible: &hidden})
	if err != nil {
		return "", fmt.Errorf("fork the thread to review on: %w", err)
	}
	if rf.History != nil {
		rf.History.Close()
	}
	thread := rf.Session.ThreadID
	defer func() {
		if err := r.Archive(context.WithoutCancel(ctx), in.Provider, thread); err != nil {
			r.log.WarnContext(ctx, "codex: the review's thread not archived", "thread", thread, "err", err)
		}
	}()
	p, err := r.current()
	if err != nil {
		return "", err
	}
	var started struct {
		Turn struct {
			ID string `json:"id"`
		} `json:"turn"`
	}
	params := reviewStartParams{ThreadID: thread, Target: reviewTarget{Type: "custom", Instructions: in.Instructions}}
	if err := r.call(ctx, p, "review/start", params, &started); err != nil {
		return "", err
	}
	if started.Turn.ID == "" {
		return "", errors.New("review/start answered no turn")
	}
	for {
		ts, err := r.History(ctx, agent.HistoryInput{Provider: in.Provider, ThreadID: thread, TurnIDs: []string{started.Turn.ID}})
		if err != nil {
			return "", err
		}
		if len(ts) == 1 && ts[0].Status != agent.TurnInProgress {
			return reviewText(ts[0])
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("the review did not end: %w", ctx.Err())
		case <-time.After(reviewPoll):
		}
	}
}

// reviewPoll is how often Review reads whether the review turn ended.
const reviewPoll = 250 * time.Millisecond

// reviewText is a finished review turn's text: its last assistant message.
func reviewText(t agent.RuntimeTurn) (string, error) {
	if t.Status != agent.TurnCompleted {
		return "", fmt.Errorf("the review turn ended %s: %s", t.Status, t.Error)
	}
	for i := len(t.Messages) - 1; i >= 0; i-- {
		if t.Messages[i].Role == "assistant" && t.Messages[i].Text != "" {
			return t.Messages[i].Text, nil
		}
	}
	return "", errors.New("the review turn has no text")
}

type reviewStartParams struct {
	ThreadID string       `json:"threadId"`
	Target   reviewTarget `json:"target"`
}

type reviewTarget struct {
	Type         string `json:"type"`
	Instructions string `json:"instructions,omitempty"`
}
