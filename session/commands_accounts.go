package session

import (
	"context"
	"strings"

	"tuttid/activity"
	"tuttid/agent"
	"tuttid/apperr"
)

// Accounts is what sessions ask of the provider's account (package
// account): a turn is refused at once when Codex is not signed in or the
// settings name an effort the model lacks; the account's notifications
// go to it.
type Accounts interface {
	// CheckSignedIn refuses, saying how to sign in, what Codex could not
	// run now (what: "start the session").
	CheckSignedIn(ctx context.Context, what string) error
	// CheckModelSettings refuses a reasoning effort the model lacks.
	CheckModelSettings(ctx context.Context, st agent.ComposerSettings) error
	// Updated takes an account notification (agent.EventAccountUpdated)
	// and returns the event to publish to every workspace, if any.
	Updated(ctx context.Context, e agent.Event) (activity.Event, bool)
}

// NoAccounts is the Accounts of a service wired without them.
func NoAccounts() Accounts { return noAccounts{} }

// noAccounts refuses nothing but an effort the static model list lacks:
// a service wired without accounts.
type noAccounts struct{}

func (noAccounts) CheckSignedIn(context.Context, string) error { return nil }
func (noAccounts) CheckModelSettings(_ context.Context, st agent.ComposerSettings) error {
	if st.ReasoningEffort == "" {
		return nil
	}
	return CheckEffort(nil, st)
}
func (noAccounts) Updated(context.Context, agent.Event) (activity.Event, bool) {
	return activity.Event{}, false
}

// CheckEffort refuses, as invalid_input, a reasoning effort the model
// lacks in models (nil: the static list).
func CheckEffort(models []agent.Model, st agent.ComposerSettings) error {
	if err := agent.CheckEffort(models, st.Model, st.ReasoningEffort); err != nil {
		return apperr.Wrap(err, apperr.InvalidInput, "settings.reasoningEffort: %s",
			strings.TrimPrefix(err.Error(), agent.ErrInvalidSettings.Error()+": "))
	}
	return nil
}
