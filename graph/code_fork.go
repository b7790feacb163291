package graph

import (
	"tuttid/fork"
	"tuttid/graph/model"
)

// forkCode is ForkSessionInput.code for the fork saga; absent is SHARED.
func forkCode(c *model.ForkCodeInput) *fork.CodeInput {
	if c == nil {
		return nil
	}
	return &fork.CodeInput{Worktree: c.Mode == model.CodeModeWorktree, Branch: deref(c.Branch)}
}
