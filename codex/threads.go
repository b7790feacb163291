package codex

import (
	"context"
	"errors"
	"fmt"
	"time"

	"tuttid/agent"
)

var _ agent.ThreadFinder = (*Runtime)(nil)

// maxListPages bounds how many thread/list pages FindForks reads.
const maxListPages = 50

type threadListParams struct {
	Cwd           string   `json:"cwd,omitempty"`
	Cursor        *string  `json:"cursor,omitempty"`
	Limit         int      `json:"limit"`
	SortKey       string   `json:"sortKey"`
	SortDirection string   `json:"sortDirection"`
	SourceKinds   []string `json:"sourceKinds,omitempty"`
	Archived      bool     `json:"archived"`
}

type wireListedThread struct {
	ID           string  `json:"id"`
	ForkedFromID *string `json:"forkedFromId"`
	Cwd          string  `json:"cwd"`
	CreatedAt    int64   `json:"createdAt"` // Unix seconds
}

type wireThreadList struct {
	Data       []wireListedThread `json:"data"`
	NextCursor *string            `json:"nextCursor"`
}

// FindForks implements agent.ThreadFinder with thread/list: the threads in
// the parent's cwd, newest first, down to CreatedAfter, whose forkedFromId
// is the source thread. Every source kind is asked for, in case the
// default leaves some out. The listing's forkedFromId is null in 0.169.0
// (verified), so each thread in the window is read (thread/read) for it;
// the window after a crash holds a handful of threads.
func (r *Runtime) FindForks(ctx context.Context, in agent.FindForksInput) ([]agent.ThreadInfo, error) {
	if err := checkProvider(in.Provider); err != nil {
		return nil, err
	}
	p, err := r.current()
	if err != nil {
		return nil, err
	}
	// Codex keeps whole seconds: a thread made in the entry's second counts.
	after := in.CreatedAfter.Truncate(time.Second).Unix()
	params := threadListParams{Cwd: in.Cwd, Limit: 100, SortKey: "created_at", SortDirection: "desc",
		SourceKinds: allSourceKinds(), Archived: in.Archived}
	var out []agent.ThreadInfo
	for page := 0; page < maxListPages; page++ {
		var resp wireThreadList
		if err := r.call(ctx, p, "thread/list", params, &resp); err != nil {
			return nil, err
		}
		for _, t := range resp.Data {
			if t.CreatedAt < after {
				return out, nil
			}
			from := strOr(t.ForkedFromID, "")
			if from == "" {
				// thread/list in 0.169.0 leaves forkedFromId null; thread/read
				// has it.
				var read wireThreadRead
				err := r.call(ctx, p, "thread/read", map[string]any{"threadId": t.ID, "includeTurns": false}, &read)
				if errors.Is(err, agent.ErrThreadNotFound) || errors.Is(err, errNotMaterialized) {
					continue
				}
				if err != nil {
					return nil, err
				}
				from = strOr(read.Thread.ForkedFromID, "")
			}
			if from == in.ParentThreadID {
				out = append(out, agent.ThreadInfo{ThreadID: t.ID, ForkedFromID: in.ParentThreadID,
					Cwd: t.Cwd, CreatedAt: time.Unix(t.CreatedAt, 0)})
			}
		}
		if resp.NextCursor == nil || *resp.NextCursor == "" || len(resp.Data) == 0 {
			return out, nil
		}
		params.Cursor = resp.NextCursor
	}
	return out, fmt.Errorf("codex thread/list: more than %d pages of threads in %s", maxListPages, in.Cwd)
}

// allSourceKinds are ThreadSourceKind's values in 0.169.0.
func allSourceKinds() []string {
	return []string{"cli", "vscode", "exec", "appServer", "subAgent", "subAgentReview",
		"subAgentCompact", "subAgentThreadSpawn", "subAgentOther", "unknown"}
}

// lostRequest marks an error after which Codex may have acted on the
// request: the process died or did not answer in time.
func lostRequest(err error) error {
	if errors.Is(err, agent.ErrRuntimeUnavailable) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %w", agent.ErrRequestLost, err)
	}
	return err
}
