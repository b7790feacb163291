package codex

import (
	"context"
	"errors"
	"fmt"

	"tuttid/agent"
)

// modelPageLimit is model/list's page size: Codex 0.169.0's catalog is one
// page of 9; a smaller limit than the catalog would still be read whole.
const modelPageLimit = 100

// Models implements agent.Accounts: model/list, every page, hidden models
// left out; kept until the account changes (the catalog is the binary's
// own, so a restart of the same binary keeps it).
func (r *Runtime) Models(ctx context.Context, provider string) ([]agent.Model, error) {
	if err := checkProvider(provider); err != nil {
		return nil, err
	}
	r.acct.mu.Lock()
	models := r.acct.models
	r.acct.mu.Unlock()
	if models != nil {
		return models, nil
	}
	p, err := r.current()
	if err != nil {
		return nil, err
	}
	models = []agent.Model{}
	seen := map[string]bool{}
	var cursor *string
	for {
		params := map[string]any{"limit": r.modelPageLimit}
		if cursor != nil {
			params["cursor"] = *cursor
		}
		var page wireModelPage
		err := r.call(ctx, p, "model/list", params, &page)
		if errors.Is(err, errMethodUnsupported) {
			// A Codex without model/list: no models, and no asking again.
			models = []agent.Model{}
			break
		}
		if err != nil {
			return nil, err
		}
		for _, m := range page.Data {
			if m.Hidden {
				continue
			}
			models = append(models, modelOf(m))
		}
		if page.NextCursor == nil || *page.NextCursor == "" {
			break
		}
		if seen[*page.NextCursor] {
			return nil, fmt.Errorf("%w: model/list repeated cursor %q", agent.ErrProviderFailed, *page.NextCursor)
		}
		seen[*page.NextCursor] = true
		cursor = page.NextCursor
	}
	r.acct.mu.Lock()
	r.acct.models = models
	r.acct.mu.Unlock()
	return models, nil
}

func modelOf(m wireModel) agent.Model {
	out := agent.Model{
		ID: m.ID, Model: m.Model, DisplayName: m.DisplayName, Description: m.Description,
		IsDefault: m.IsDefault, DefaultReasoningEffort: m.DefaultReasoningEffort,
		ReasoningEfforts: make([]string, 0, len(m.SupportedReasoningEfforts)),
	}
	for _, e := range m.SupportedReasoningEfforts {
		out.ReasoningEfforts = append(out.ReasoningEfforts, e.ReasoningEffort)
	}
	return out
}

// checkEffort refuses a reasoning effort the chosen model does not
// support (agent.CheckEffort). When Codex cannot list its models (an old
// Codex, a fake, a Codex that is down), the static list decides.
func (r *Runtime) checkEffort(ctx context.Context, s agent.ComposerSettings) error {
	if s.ReasoningEffort == "" {
		return nil
	}
	models, err := r.Models(ctx, agent.ProviderCodex)
	if err != nil && !errors.Is(err, agent.ErrProviderFailed) && !errors.Is(err, agent.ErrRuntimeUnavailable) {
		return err
	}
	return agent.CheckEffort(models, s.Model, s.ReasoningEffort)
}
