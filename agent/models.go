package agent

import (
	"fmt"
	"slices"
	"strings"
)

// CheckEffort checks a reasoning effort against the provider's models:
// for a model the list has, the effort must be one it supports; for any
// other model, and for no model (the provider's configured one, which
// need not be the list's default), one of ReasoningEfforts (the
// provider's answer then decides). An empty effort is always accepted. The error wraps ErrInvalidSettings and names the
// efforts that would do.
func CheckEffort(models []Model, model, effort string) error {
	if effort == "" {
		return nil
	}
	if m, ok := FindModel(models, model); ok && len(m.ReasoningEfforts) > 0 {
		if slices.Contains(m.ReasoningEfforts, effort) {
			return nil
		}
		return fmt.Errorf("%w: reasoning effort %q is not one that model %s supports (%s)",
			ErrInvalidSettings, effort, m.Model, strings.Join(m.ReasoningEfforts, ", "))
	}
	if !slices.Contains(ReasoningEfforts(), effort) {
		return fmt.Errorf("%w: unknown reasoning effort %q (want one of %s)",
			ErrInvalidSettings, effort, strings.Join(ReasoningEfforts(), ", "))
	}
	return nil
}

// FindModel returns the listed model named model (by its model name or id).
func FindModel(models []Model, model string) (Model, bool) {
	for _, m := range models {
		if model != "" && (m.Model == model || m.ID == model) {
			return m, true
		}
	}
	return Model{}, false
}
