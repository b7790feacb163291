package graph

import (
	"encoding/json"

	"tuttid/graph/model"
)

// jsonValue returns stored JSON for a JSON field: {} when empty.
func jsonValue(raw json.RawMessage) any {
	if len(raw) == 0 {
		return map[string]any{}
	}
	return raw
}

// rawJSON encodes a JSON input value (nil stays nil).
func rawJSON(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

func approvalDecisions(ds []string) []model.ApprovalDecision {
	out := make([]model.ApprovalDecision, 0, len(ds))
	for _, d := range ds {
		out = append(out, model.ApprovalDecision(d))
	}
	return out
}
