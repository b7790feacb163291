package agent

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// Errors of the account side of a provider; match them with errors.Is.
var (
	// ErrNotSignedIn: the provider needs a sign-in before it can run a turn
	// (Codex: requiresOpenaiAuth and no account, or credentials it refused).
	ErrNotSignedIn = errors.New("provider not signed in")
	// ErrTurnNotRunning: the turn named is not the one the thread runs now
	// (steering a finished or unknown turn).
	ErrTurnNotRunning = errors.New("provider turn not running")
	// ErrLoginUnavailable: the provider could not start a login of the kind
	// asked (no network to its sign-in service, a method it lacks).
	ErrLoginUnavailable = errors.New("provider login unavailable")
)

// Accounts is implemented by runtimes whose provider has accounts, models
// and usage limits of its own (Codex: account/*, model/list). The service
// reaches it with a type assertion on the Runtime, so runtimes without it
// keep compiling; a runtime that has it keeps the account current from
// the provider's notifications and reports changes as EventAccountUpdated.
type Accounts interface {
	// Account returns the provider's sign-in state, as last read or
	// reported (cheap: no provider call once known).
	Account(ctx context.Context, provider string) (Account, error)
	// StartLogin starts a sign-in. An API key login is usually complete
	// when it returns (Login.Account set); the browser and device-code
	// logins complete later, reported as EventAccountUpdated.
	StartLogin(ctx context.Context, in LoginInput) (Login, error)
	// CancelLogin stops a pending login; an unknown or finished one is not
	// an error.
	CancelLogin(ctx context.Context, provider, loginID string) error
	// Logout signs the provider out and returns the account after it.
	Logout(ctx context.Context, provider string) (Account, error)
	// Models lists the models the provider offers (every page, hidden ones
	// left out), default first as the provider orders them.
	Models(ctx context.Context, provider string) ([]Model, error)
	// RateLimits returns the account's usage limits as last reported, nil
	// when the provider reported none.
	RateLimits(ctx context.Context, provider string) (*RateLimits, error)
}

// Account is a provider's sign-in state.
type Account struct {
	// SignedIn: the provider can run turns, because it has an account or
	// because its model provider needs none. False after the provider
	// refused the credentials it has, until a new login.
	SignedIn bool
	// RequiresAuth: the provider's model provider needs a sign-in (Codex's
	// requiresOpenaiAuth).
	RequiresAuth bool
	// AuthMode is the account type (Codex: apiKey, chatgpt, ...), "" without one.
	AuthMode string
	Email    string
	PlanType string
	// CredentialsRefused: the last turn failed because the provider's
	// credentials were refused or expired (then SignedIn is false).
	CredentialsRefused bool
}

// LoginMethod is how a person signs the provider in.
type LoginMethod string

const (
	LoginAPIKey     LoginMethod = "API_KEY"
	LoginChatGPT    LoginMethod = "CHATGPT"
	LoginDeviceCode LoginMethod = "DEVICE_CODE"
)

// LoginInput starts a login. APIKey is a secret: it goes to the provider
// and nowhere else; the type redacts it when printed or logged.
type LoginInput struct {
	Provider string
	Method   LoginMethod
	APIKey   string
}

// String keeps the key out of any %v or %+v.
func (in LoginInput) String() string {
	return "LoginInput{Provider:" + in.Provider + " Method:" + string(in.Method) + " APIKey:" + redacted(in.APIKey) + "}"
}

// GoString keeps the key out of %#v.
func (in LoginInput) GoString() string { return in.String() }

// LogValue keeps the key out of slog.
func (in LoginInput) LogValue() slog.Value {
	return slog.GroupValue(slog.String("provider", in.Provider), slog.String("method", string(in.Method)),
		slog.String("api_key", redacted(in.APIKey)))
}

func redacted(secret string) string {
	if secret == "" {
		return ""
	}
	return "[redacted]"
}

// Login is a started login.
type Login struct {
	// LoginID names a pending login (for CancelLogin and the completion
	// event); "" when the login completed at once.
	LoginID string
	// AuthURL (CHATGPT): open it in a browser on the provider's machine;
	// the provider runs the callback itself.
	AuthURL string
	// VerificationURL and UserCode (DEVICE_CODE): open the URL in any
	// browser and enter the code.
	VerificationURL string
	UserCode        string
	// Account is set when the login is already complete.
	Account *Account
}

// Model is one model the provider offers.
type Model struct {
	ID                     string
	Model                  string
	DisplayName            string
	Description            string
	IsDefault              bool
	ReasoningEfforts       []string
	DefaultReasoningEffort string
}

// RateLimits are the account's usage limits.
type RateLimits struct {
	Primary   *RateLimitWindow
	Secondary *RateLimitWindow
	// UpdatedAt is when the provider reported them (tuttid's clock).
	UpdatedAt time.Time
}

// RateLimitWindow is one usage window.
type RateLimitWindow struct {
	UsedPercent float64
	// WindowMinutes is the window's length, 0 when unknown.
	WindowMinutes int
	// ResetsAt is when the window resets, zero when unknown.
	ResetsAt time.Time
}

// TokenUsage is what a thread has used, as the provider counts it.
type TokenUsage struct {
	TotalTokens           int64
	InputTokens           int64
	CachedInputTokens     int64
	OutputTokens          int64
	ReasoningOutputTokens int64
	// LastTurnTotalTokens is the total of the last model call's usage.
	LastTurnTotalTokens int64
	// ContextWindow is the model's context window, 0 when unknown.
	ContextWindow int64
}

// SteerInput adds a person's text to a running turn.
type SteerInput struct {
	Provider string
	ThreadID string
	TurnID   string
	Text     string
}

// Steerer is implemented by runtimes that can add input to a running turn
// (Codex: turn/steer). A turn that is not the running one fails with
// ErrTurnNotRunning.
type Steerer interface {
	Steer(ctx context.Context, in SteerInput) error
}

// TurnFailure is why a turn failed, as the provider classified it.
type TurnFailure struct {
	// Message is the provider's text.
	Message string
	// Code is the provider's kind (Codex's codexErrorInfo variant, such as
	// usageLimitExceeded or modelNotFound); ErrorUnauthorized whenever the
	// provider's credentials were refused (HTTP 401).
	Code string
	// HTTPStatus is the upstream status the provider saw, 0 when none.
	HTTPStatus int
}

// ErrorUnauthorized is TurnFailure.Code when credentials were refused.
const ErrorUnauthorized = "unauthorized"

// Event kinds of the account side and of turn health. Events of these kinds
// carry the payload named beside them.
const (
	// EventTurnRetrying: the provider retries a failed model request of
	// the running turn (Codex's error notification with willRetry);
	// Failure has its message and kind.
	EventTurnRetrying EventKind = "turn_retrying"
	// EventTokenUsage: a thread's usage changed (TokenUsage).
	EventTokenUsage EventKind = "token_usage"
	// EventAccountUpdated: the account changed, a login completed or
	// failed, or credentials were refused (Account; LoginID and Error for
	// a login's outcome).
	EventAccountUpdated EventKind = "account_updated"
	// EventRateLimits: the account's usage limits changed (RateLimits).
	EventRateLimits EventKind = "rate_limits"
	// EventWarning: the provider warned about something (Notice; Method
	// says which notification: warning, configWarning, deprecationNotice).
	EventWarning EventKind = "warning"
)
