package codex

import (
	"context"

	"tuttid/agent"
)

// failedHistory is a history stream that failed before its first page.
type failedHistory struct{ err error }

func (f failedHistory) Next(context.Context) ([]agent.RuntimeTurn, error) { return nil, f.err }
func (failedHistory) Close()                                              {}
