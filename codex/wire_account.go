package codex

import "encoding/json"

// Codex app-server shapes of accounts, models, usage and turn health
// (0.169.0 and 0.171.0 agree on every field read here; 0.171.0 adds
// AccountUpdatedNotification.reason and the codexErrorInfo kind
// "bioPolicy"). Field names follow `codex app-server generate-ts`.

// wireAccount is GetAccountResponse.account: apiKey, chatgpt (email,
// planType), amazonBedrock, gcp.
type wireAccount struct {
	Type     string  `json:"type"`
	Email    *string `json:"email"`
	PlanType *string `json:"planType"`
}

type wireGetAccount struct {
	Account            *wireAccount `json:"account"`
	RequiresOpenaiAuth bool         `json:"requiresOpenaiAuth"`
}

// wireLoginResponse is LoginAccountResponse.
type wireLoginResponse struct {
	Type            string `json:"type"`
	LoginID         string `json:"loginId"`
	AuthURL         string `json:"authUrl"`
	VerificationURL string `json:"verificationUrl"`
	UserCode        string `json:"userCode"`
}

type wireCancelLogin struct {
	Status string `json:"status"` // canceled, notFound
}

type wireAccountUpdated struct {
	AuthMode *string `json:"authMode"` // apikey, chatgpt, ... (AuthMode)
	PlanType *string `json:"planType"`
}

type wireLoginCompleted struct {
	LoginID *string `json:"loginId"`
	Success bool    `json:"success"`
	Error   *string `json:"error"`
}

type wireModel struct {
	ID                        string `json:"id"`
	Model                     string `json:"model"`
	DisplayName               string `json:"displayName"`
	Description               string `json:"description"`
	Hidden                    bool   `json:"hidden"`
	IsDefault                 bool   `json:"isDefault"`
	SupportedReasoningEfforts []struct {
		ReasoningEffort string `json:"reasoningEffort"`
	} `json:"supportedReasoningEfforts"`
	DefaultReasoningEffort string `json:"defaultReasoningEffort"`
}

type wireModelPage struct {
	Data       []wireModel `json:"data"`
	NextCursor *string     `json:"nextCursor"`
}

type wireRateLimitWindow struct {
	UsedPercent        float64 `json:"usedPercent"`
	WindowDurationMins *int    `json:"windowDurationMins"`
	ResetsAt           *int64  `json:"resetsAt"` // Unix seconds
}

type wireRateLimitSnapshot struct {
	Primary   *wireRateLimitWindow `json:"primary"`
	Secondary *wireRateLimitWindow `json:"secondary"`
}

// wireRateLimits is both GetAccountRateLimitsResponse and
// AccountRateLimitsUpdatedNotification (the part tuttid reads).
type wireRateLimits struct {
	RateLimits wireRateLimitSnapshot `json:"rateLimits"`
}

type wireTokenUsageBreakdown struct {
	TotalTokens           int64 `json:"totalTokens"`
	InputTokens           int64 `json:"inputTokens"`
	CachedInputTokens     int64 `json:"cachedInputTokens"`
	OutputTokens          int64 `json:"outputTokens"`
	ReasoningOutputTokens int64 `json:"reasoningOutputTokens"`
}

type wireTokenUsageUpdated struct {
	ThreadID   string `json:"threadId"`
	TurnID     string `json:"turnId"`
	TokenUsage struct {
		Total              wireTokenUsageBreakdown `json:"total"`
		Last               wireTokenUsageBreakdown `json:"last"`
		ModelContextWindow *int64                  `json:"modelContextWindow"`
	} `json:"tokenUsage"`
}

// wireErrorNotification is ErrorNotification: a failed model request of a
// running turn, retried by Codex when willRetry.
type wireErrorNotification struct {
	Error     wireCodexError `json:"error"`
	WillRetry bool           `json:"willRetry"`
	ThreadID  string         `json:"threadId"`
	TurnID    string         `json:"turnId"`
}

// wireNotice covers warning (message), configWarning and
// deprecationNotice (summary, details).
type wireNotice struct {
	ThreadID *string `json:"threadId"`
	Message  string  `json:"message"`
	Summary  string  `json:"summary"`
	Details  *string `json:"details"`
}

type wireSteerResponse struct {
	TurnID string `json:"turnId"`
}

// rawOf keeps params for an event.
func rawOf(params json.RawMessage) json.RawMessage {
	return append(json.RawMessage(nil), params...)
}
