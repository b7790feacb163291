package codex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"tuttid/agent"
)

// TestObserveKeepsTheAccountCurrent feeds Codex's notifications (as
// observed on 0.169.0 and 0.171.0) through the runtime's observer and
// checks the account state and the events it completes.
func TestObserveKeepsTheAccountCurrent(t *testing.T) {
	r := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	defer r.Close()
	// As account/read answered with no credentials.
	r.acct.acct = agent.Account{RequiresAuth: true}
	r.acct.known = true

	feed := func(method, params string) (agent.Event, []agent.Event) {
		t.Helper()
		return r.observe(toEvent(method, json.RawMessage(params)))
	}
	state := func() agent.Account {
		r.acct.mu.Lock()
		defer r.acct.mu.Unlock()
		return r.acct.acct
	}

	// A failed login: the reason, the account unchanged.
	e, more := feed("account/login/completed", `{"loginId":"L1","success":false,"error":"Login was not completed"}`)
	if e.Kind != agent.EventAccountUpdated || e.LoginID != "L1" || e.Error == "" || e.Account == nil || e.Account.SignedIn || len(more) != 0 {
		t.Fatalf("failed login event = %+v (%+v)", e, e.Account)
	}
	// An API key login: completed, then the account.
	e, _ = feed("account/login/completed", `{"loginId":null,"success":true,"error":null}`)
	if !e.Account.SignedIn || e.Error != "" {
		t.Fatalf("completed login event = %+v (%+v)", e, e.Account)
	}
	e, _ = feed("account/updated", `{"authMode":"apikey","planType":null}`)
	if a := *e.Account; !a.SignedIn || !a.RequiresAuth || a.AuthMode != "apiKey" || state() != a {
		t.Fatalf("account/updated event = %+v, state %+v", a, state())
	}
	// A turn refused for the credentials flips the account, right after
	// the turn's completion.
	e, more = feed("turn/completed", `{"threadId":"T","turn":{"id":"U","items":[],"status":"failed",`+
		`"error":{"message":"401","codexErrorInfo":{"httpConnectionFailed":{"httpStatusCode":401}}}}}`)
	if e.Kind != agent.EventTurnCompleted || e.Failure.Code != agent.ErrorUnauthorized || len(more) != 1 ||
		more[0].Kind != agent.EventAccountUpdated || more[0].Account.SignedIn || !more[0].Account.CredentialsRefused {
		t.Fatalf("refused turn: %+v then %+v", e, more)
	}
	if a := state(); a.SignedIn || !a.CredentialsRefused || a.AuthMode != "apiKey" || !r.acct.refused {
		t.Fatalf("state after the refusal = %+v", a)
	}
	// Another failure kind leaves the account alone.
	if _, more = feed("turn/completed", `{"threadId":"T","turn":{"id":"V","items":[],"status":"failed","error":{"message":"m","codexErrorInfo":"usageLimitExceeded"}}}`); len(more) != 0 {
		t.Fatalf("usage limit flipped the account: %+v", more)
	}
	// Logout (account/updated with no mode).
	e, _ = feed("account/updated", `{"authMode":null,"planType":null}`)
	if a := *e.Account; a.SignedIn || a.CredentialsRefused || a.AuthMode != "" || r.acct.refused {
		t.Fatalf("after logout = %+v", a)
	}

	// Rate limits: sparse updates keep the windows they leave out.
	e, _ = feed("account/rateLimits/updated", `{"rateLimits":{"primary":{"usedPercent":43,"windowDurationMins":300,"resetsAt":1796413159},"secondary":null}}`)
	if e.RateLimits == nil || e.RateLimits.Primary.UsedPercent != 43 || e.RateLimits.Secondary != nil {
		t.Fatalf("first limits = %+v", e.RateLimits)
	}
	e, _ = feed("account/rateLimits/updated", `{"rateLimits":{"primary":null,"secondary":{"usedPercent":7,"windowDurationMins":10080,"resetsAt":null}}}`)
	if e.RateLimits.Primary == nil || e.RateLimits.Primary.UsedPercent != 43 || e.RateLimits.Secondary.UsedPercent != 7 {
		t.Fatalf("merged limits = %+v", e.RateLimits)
	}
	e, _ = feed("account/rateLimits/updated", `{"rateLimits":{"limitId":"codex","primary":null,"secondary":null}}`)
	if e.RateLimits == nil || e.RateLimits.Primary.UsedPercent != 43 {
		t.Fatalf("an empty update cleared the limits: %+v", e.RateLimits)
	}

	// A restart makes the account be read again.
	r.observe(agent.Event{Kind: agent.EventRuntimeRestarted})
	if r.acct.known {
		t.Fatal("account still known after a restart")
	}
}

// A custom provider that needs no sign-in is not flipped by a 401: no
// Codex sign-in would help.
func TestObserveCustomProviderUnauthorized(t *testing.T) {
	r := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	defer r.Close()
	r.acct.acct = agent.Account{SignedIn: true}
	r.acct.known = true
	_, more := r.observe(toEvent("turn/completed", json.RawMessage(`{"threadId":"T","turn":{"id":"U","items":[],"status":"failed",`+
		`"error":{"message":"401","codexErrorInfo":{"httpConnectionFailed":{"httpStatusCode":401}}}}}`)))
	if len(more) != 0 || !r.acct.acct.SignedIn {
		t.Fatalf("custom provider flipped: %+v, %+v", more, r.acct.acct)
	}
}

func TestWithoutSecret(t *testing.T) {
	const key = "sk-abc"
	for _, c := range []struct {
		name string
		err  error
		want error
	}{
		{"provider error echoing the key", fmt.Errorf("codex: %w", &agent.ProviderError{Method: "account/login/start", Message: "bad key sk-abc"}), agent.ErrProviderFailed},
		{"transport error echoing the key", fmt.Errorf("%w: wrote sk-abc", agent.ErrRuntimeUnavailable), agent.ErrRuntimeUnavailable},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := withoutSecret(c.err, key)
			if strings.Contains(got.Error(), key) || !errors.Is(got, c.want) {
				t.Fatalf("withoutSecret = %v", got)
			}
		})
	}
	plain := errors.New("no secret here")
	if withoutSecret(plain, key) != plain || withoutSecret(nil, key) != nil {
		t.Fatal("an error without the key was changed")
	}
}

func TestStartLoginRefusesBadInput(t *testing.T) {
	r := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	defer r.Close()
	ctx := context.Background()
	for _, in := range []agent.LoginInput{
		{Provider: agent.ProviderCodex, Method: agent.LoginAPIKey},
		{Provider: agent.ProviderCodex, Method: "PASSWORD"},
		{Provider: agent.ProviderCodex, Method: agent.LoginChatGPT, APIKey: "sk-x"},
	} {
		if _, err := r.StartLogin(ctx, in); !errors.Is(err, agent.ErrInvalidSettings) || strings.Contains(fmt.Sprint(err), "sk-x") {
			t.Errorf("%v: %v", in, err)
		}
	}
	if _, err := r.StartLogin(ctx, agent.LoginInput{Provider: "claude", Method: agent.LoginAPIKey, APIKey: "k"}); !errors.Is(err, agent.ErrUnsupportedProvider) {
		t.Errorf("other provider: %v", err)
	}
}
