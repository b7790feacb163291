package session

import (
	"tuttid/agent"
	"tuttid/ent"
)

// Runtime context keys (ent.AgentSession.RuntimeContext, shown to clients
// as runtimeContext: their spelling is the API's).
const (
	// What the provider said a session's thread is (the spec: "response
	// thread metadata updates the child runtime session").
	CtxModel         = "model"
	CtxModelProvider = "modelProvider"

	// What a fork's child remembers of its parent and of the fork.
	CtxForkedFromSessionID = "forkedFromAgentSessionId"
	CtxForkedFromThreadID  = "forkedFromProviderSessionId"
	CtxForkedFromTurnID    = "forkedFromTurnId"
	CtxForkParentTitle     = "forkParentTitle"
	CtxForkedAtUnixMs      = "forkedAtUnixMs"
	// CtxForkMessageSource says where the child's history came from
	// (fork.Source*).
	CtxForkMessageSource = "forkMessageSource"
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
