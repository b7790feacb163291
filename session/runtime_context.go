package session

import (
	"tuttid/agent"
	"tuttid/ent"
)

// Runtime context keys holding what the provider said its thread is (the
// spec: "response thread metadata updates the child runtime session").
const (
	CtxModel         = "model"
	CtxModelProvider = "modelProvider"
)

// WithThreadMetadata adds the model and model provider the provider
// reported for a thread to a runtime context (rc may be nil).
func WithThreadMetadata(rc map[string]any, rs agent.RuntimeSession) map[string]any {
	if rc == nil {
		rc = map[string]any{}
	}
	if rs.Model != "" {
		rc[CtxModel] = rs.Model
	}
	if rs.ModelProvider != "" {
		rc[CtxModelProvider] = rs.ModelProvider
	}
	return rc
}

// ModelProviderOf is the model provider a session's thread runs on, as the
// provider reported it ("" when unknown).
func ModelProviderOf(a *ent.AgentSession) string {
	s, _ := a.RuntimeContext[CtxModelProvider].(string)
	return s
}
