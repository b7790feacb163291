package codex_test

// Sign-in, models, usage, retries and steering against the real
// `codex app-server`, offline: Codex's built-in openai provider is pointed
// at codextest's model server (codextest.OpenAIConfig), which accepts one
// API key and answers 401 to any other.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"tuttid/agent"
	"tuttid/codex"
	"tuttid/codex/codextest"
)

const (
	goodKey  = "sk-tuttid-test-good-5b8e2f"
	wrongKey = "sk-tuttid-test-wrong-91c4d7"
)

// lockedBuffer collects a logger's output from several goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

type accountRig struct {
	*realRig
	logs *lockedBuffer // every log line of the runtime, at debug level
	home string
}

// newAccountRig runs the real Codex on the openai provider with no
// credentials, refusing turns until it is signed in.
func newAccountRig(t *testing.T, env ...string) *accountRig {
	t.Helper()
	model := codextest.StartModelServer(t)
	model.SetAPIKey(goodKey)
	home := codextest.NewOpenAICodexHome(t, model.URL())
	cfg := realConfig(t, home)
	cfg.Env = append(cfg.Env, env...)
	cfg.RequireSignIn = true
	logs := &lockedBuffer{}
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("runtime log:\n%s", logs.String())
		}
	})
	rt, ev := launch(t, cfg)
	return &accountRig{realRig: &realRig{rt: rt, ev: ev, model: model}, logs: logs, home: home}
}

func (g *accountRig) startThread(t *testing.T, s agent.ComposerSettings) string {
	t.Helper()
	sess, err := g.rt.Start(rctx(t), agent.StartInput{Provider: agent.ProviderCodex, Cwd: t.TempDir(), Settings: s})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	return sess.ThreadID
}

func (g *accountRig) account(t *testing.T) agent.Account {
	t.Helper()
	a, err := g.rt.Account(rctx(t), agent.ProviderCodex)
	if err != nil {
		t.Fatalf("Account: %v", err)
	}
	return a
}

func (g *accountRig) login(t *testing.T, key string) agent.Login {
	t.Helper()
	l, err := g.rt.StartLogin(rctx(t), agent.LoginInput{Provider: agent.ProviderCodex, Method: agent.LoginAPIKey, APIKey: key})
	if err != nil {
		t.Fatalf("StartLogin: %v", err)
	}
	return l
}

// eventsAfter are the events recorded after the first n.
func eventsAfter(ev *codex.EventRecorder, n int) []agent.Event { return ev.Events()[n:] }

func TestCodexSignInWithAPIKey(t *testing.T) {
	g := newAccountRig(t)
	var errs []error // every error the runtime returned, checked for the keys

	// No credentials: Codex says it needs a sign-in, and the runtime
	// refuses to start what Codex cannot run.
	if a := g.account(t); a.SignedIn || !a.RequiresAuth || a.AuthMode != "" {
		t.Fatalf("account before sign-in = %+v", a)
	}
	_, err := g.rt.Start(rctx(t), agent.StartInput{Provider: agent.ProviderCodex, Cwd: t.TempDir()})
	if !errors.Is(err, agent.ErrNotSignedIn) || !strings.Contains(err.Error(), "sign in") {
		t.Fatalf("Start before sign-in: %v, want ErrNotSignedIn saying how to sign in", err)
	}
	errs = append(errs, err)
	if l, err := g.rt.StartLogin(rctx(t), agent.LoginInput{Provider: agent.ProviderCodex, Method: agent.LoginAPIKey}); !errors.Is(err, agent.ErrInvalidSettings) {
		t.Fatalf("API key login without a key: %+v, %v", l, err)
	}

	// A key the model server refuses: Codex takes it (it cannot check it),
	// the turn retries, fails unauthorized, and the account flips.
	mark := len(g.ev.Events())
	l := g.login(t, wrongKey)
	if l.Account == nil || !l.Account.SignedIn || l.Account.AuthMode != "apiKey" || l.LoginID != "" {
		t.Fatalf("API key login = %+v (account %+v)", l, l.Account)
	}
	g.ev.Wait(t, realWait, "account updated after the login", func(e agent.Event) bool {
		return e.Kind == agent.EventAccountUpdated && e.Account != nil && e.Account.SignedIn && e.Account.AuthMode == "apiKey"
	})
	thread := g.startThread(t, agent.ComposerSettings{})
	turn := g.send(t, thread, "say hi", agent.ComposerSettings{})
	done := g.ev.Wait(t, time.Minute, "failed turn", codex.TurnDone(turn.ID))
	if done.Status != string(agent.TurnFailed) || done.Failure == nil || done.Failure.Code != agent.ErrorUnauthorized ||
		done.Failure.HTTPStatus != 401 || done.Error == "" {
		t.Fatalf("turn with a refused key = %+v (failure %+v)", done, done.Failure)
	}
	var retries []agent.Event
	for _, e := range eventsAfter(g.ev, mark) {
		if e.Kind == agent.EventTurnRetrying && e.TurnID == turn.ID {
			retries = append(retries, e)
		}
	}
	if len(retries) == 0 || retries[0].ThreadID != thread || !strings.HasPrefix(retries[0].Error, "Reconnecting") ||
		retries[0].Failure.Code != agent.ErrorUnauthorized {
		t.Fatalf("retries before the failure = %d (%+v)", len(retries), retries)
	}
	refused := g.ev.Wait(t, realWait, "account refused", func(e agent.Event) bool {
		return e.Kind == agent.EventAccountUpdated && e.Account != nil && e.Account.CredentialsRefused
	})
	if refused.Account.SignedIn || refused.Account.AuthMode != "apiKey" {
		t.Fatalf("account after the refusal = %+v", refused.Account)
	}
	if a := g.account(t); a.SignedIn || !a.CredentialsRefused {
		t.Fatalf("Account after the refusal = %+v", a)
	}
	// Codex's history keeps the failure's kind too (settling a turn whose
	// completion tuttid missed reads it there).
	hist, err := g.rt.History(rctx(t), agent.HistoryInput{Provider: agent.ProviderCodex, ThreadID: thread, TurnIDs: []string{turn.ID}})
	if err != nil || len(hist) != 1 || hist[0].Status != agent.TurnFailed || hist[0].ErrorCode != agent.ErrorUnauthorized || hist[0].Error == "" {
		t.Fatalf("history of the failed turn = %+v, %v", hist, err)
	}
	_, err = g.rt.SendTurn(rctx(t), agent.SendTurnInput{Provider: agent.ProviderCodex, ThreadID: thread, Text: "again"})
	if !errors.Is(err, agent.ErrNotSignedIn) || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("SendTurn with refused credentials: %v", err)
	}
	errs = append(errs, err)

	// The right key: turns run, on the model and effort asked, and report
	// their usage and the account's limits.
	if l := g.login(t, goodKey); l.Account == nil || !l.Account.SignedIn || l.Account.CredentialsRefused {
		t.Fatalf("second login = %+v", l.Account)
	}
	resets := time.Now().Add(time.Hour).Truncate(time.Second)
	g.model.SetRateLimits(&codextest.RateLimitHeaders{PrimaryUsedPercent: 42, PrimaryWindowMinutes: 300,
		PrimaryResetsAt: resets, SecondaryUsedPercent: 7, SecondaryWindowMinutes: 10080})
	g.model.SetReply(func(r codextest.Request) codextest.Reply {
		return codextest.Reply{Text: "hi", Usage: &codextest.Usage{InputTokens: 100, CachedTokens: 40, OutputTokens: 20, ReasoningTokens: 5, TotalTokens: 120}}
	})
	models, err := g.rt.Models(rctx(t), agent.ProviderCodex)
	if err != nil || len(models) == 0 {
		t.Fatalf("Models: %v, %v", models, err)
	}
	other := models[len(models)-1] // a listed model, and one of its efforts
	effort := other.ReasoningEfforts[len(other.ReasoningEfforts)-1]
	s := agent.ComposerSettings{Model: other.Model, ReasoningEffort: effort}
	g.turn(t, thread, "say hi", s)
	reqs := g.model.RequestsFor(thread)
	last := reqs[len(reqs)-1]
	var body struct {
		Model     string `json:"model"`
		Reasoning struct {
			Effort string `json:"effort"`
		} `json:"reasoning"`
	}
	if err := json.Unmarshal(last.Body, &body); err != nil {
		t.Fatal(err)
	}
	if body.Model != other.Model || body.Reasoning.Effort != effort || last.Header.Get("Authorization") != "Bearer "+goodKey {
		t.Fatalf("model request: model %q effort %q auth ok %v, want %q %q", body.Model, body.Reasoning.Effort,
			last.Header.Get("Authorization") == "Bearer "+goodKey, other.Model, effort)
	}
	usage := g.ev.Wait(t, realWait, "token usage", func(e agent.Event) bool {
		return e.Kind == agent.EventTokenUsage && e.ThreadID == thread && e.TokenUsage.LastTurnTotalTokens == 120
	})
	if u := usage.TokenUsage; u.InputTokens < 100 || u.CachedInputTokens < 40 || u.OutputTokens < 20 ||
		u.ReasoningOutputTokens < 5 || u.TotalTokens < 120 || u.ContextWindow <= 0 {
		t.Fatalf("token usage = %+v", u)
	}
	limits := g.ev.Wait(t, realWait, "rate limits", func(e agent.Event) bool {
		return e.Kind == agent.EventRateLimits && e.RateLimits != nil && e.RateLimits.Primary != nil
	})
	p, sec := limits.RateLimits.Primary, limits.RateLimits.Secondary
	if p.UsedPercent != 42 || p.WindowMinutes != 300 || !p.ResetsAt.Equal(resets) || sec == nil || sec.UsedPercent != 7 || sec.WindowMinutes != 10080 {
		t.Fatalf("rate limits = %+v / %+v", p, sec)
	}
	if rl, err := g.rt.RateLimits(rctx(t), agent.ProviderCodex); err != nil || rl == nil || rl.Primary.UsedPercent != 42 {
		t.Fatalf("RateLimits = %+v, %v", rl, err)
	}

	// Signing out: Codex forgets the key, and turns are refused again.
	a, err := g.rt.Logout(rctx(t), agent.ProviderCodex)
	if err != nil || a.SignedIn || a.AuthMode != "" {
		t.Fatalf("Logout = %+v, %v", a, err)
	}
	g.ev.Wait(t, realWait, "account updated after the logout", func(e agent.Event) bool {
		return e.Kind == agent.EventAccountUpdated && e.Account != nil && !e.Account.SignedIn && e.Account.AuthMode == ""
	})
	_, err = g.rt.SendTurn(rctx(t), agent.SendTurnInput{Provider: agent.ProviderCodex, ThreadID: thread, Text: "signed out"})
	if !errors.Is(err, agent.ErrNotSignedIn) {
		t.Fatalf("SendTurn after logout: %v", err)
	}
	errs = append(errs, err)
	_, err = g.rt.Fork(rctx(t), agent.RuntimeForkInput{Provider: agent.ProviderCodex, ParentThreadID: thread, Cwd: t.TempDir()})
	if !errors.Is(err, agent.ErrNotSignedIn) {
		t.Fatalf("Fork after logout: %v", err)
	}
	errs = append(errs, err)
	// model/list answers from Codex's bundled catalog, not the provider.
	t.Logf("requests to the model server other than model calls: %q", g.model.OtherRequests())

	// The keys went to Codex and nowhere else.
	evs, _ := json.Marshal(g.ev.Events())
	for _, key := range []string{goodKey, wrongKey} {
		if strings.Contains(g.logs.String(), key) {
			t.Errorf("a log line holds key %s", key)
		}
		if bytes.Contains(evs, []byte(key)) {
			t.Errorf("an event holds key %s", key)
		}
		for _, err := range errs {
			if strings.Contains(err.Error(), key) {
				t.Errorf("error %q holds the key", err)
			}
		}
	}
}

func TestCodexTurnRetryingThenCompletes(t *testing.T) {
	g := newAccountRig(t)
	g.login(t, goodKey)
	thread := g.startThread(t, agent.ComposerSettings{})

	for _, c := range []struct {
		name        string
		script      func()
		wantRetries int // at least
	}{
		// Streams cut before response.completed: each retry is reported.
		{"dropped streams", func() {
			var n int
			var mu sync.Mutex
			g.model.SetReply(func(r codextest.Request) codextest.Reply {
				mu.Lock()
				defer mu.Unlock()
				if n++; n <= 2 {
					return codextest.Reply{Drop: true}
				}
				return codextest.DefaultReply(r)
			})
		}, 2},
		// 500s: Codex retries a request four times silently, then reports
		// the retry of the stream.
		{"server errors", func() {
			g.model.SetReply(nil)
			g.model.FailNext(6, 500, "overloaded")
		}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.script()
			mark := len(g.ev.Events())
			turn := g.turn(t, thread, "retry "+c.name, agent.ComposerSettings{})
			var retries []agent.Event
			for _, e := range eventsAfter(g.ev, mark) {
				if e.Kind == agent.EventTurnRetrying {
					retries = append(retries, e)
				}
			}
			if len(retries) < c.wantRetries {
				t.Fatalf("%d retry events, want at least %d", len(retries), c.wantRetries)
			}
			for i, e := range retries {
				want := fmt.Sprintf("Reconnecting... %d/", i+1)
				if e.TurnID != turn.ID || e.ThreadID != thread || !strings.HasPrefix(e.Error, want) ||
					e.Failure == nil || e.Failure.Code != "responseStreamDisconnected" {
					t.Errorf("retry %d = %+v (failure %+v), want %q on turn %s", i, e, e.Failure, want, turn.ID)
				}
			}
		})
	}
}

func TestCodexBrowserAndDeviceCodeLogins(t *testing.T) {
	model := codextest.StartModelServer(t)
	g := newAccountRig(t, codextest.LoginIssuerEnv+"="+model.IssuerURL())
	ctx := rctx(t)

	for _, c := range []struct {
		method agent.LoginMethod
		check  func(agent.Login) bool
	}{
		// Codex gives the URL and runs its own callback (127.0.0.1:1455).
		{agent.LoginChatGPT, func(l agent.Login) bool {
			return strings.HasPrefix(l.AuthURL, model.IssuerURL()+"/oauth/authorize?") && strings.Contains(l.AuthURL, "redirect_uri=")
		}},
		// The sign-in service gives the code; Codex polls for its approval.
		{agent.LoginDeviceCode, func(l agent.Login) bool {
			return l.VerificationURL == model.IssuerURL()+"/codex/device" && l.UserCode == codextest.DeviceUserCode
		}},
	} {
		t.Run(string(c.method), func(t *testing.T) {
			l, err := g.rt.StartLogin(ctx, agent.LoginInput{Provider: agent.ProviderCodex, Method: c.method})
			if err != nil {
				t.Fatalf("StartLogin: %v", err)
			}
			if l.LoginID == "" || l.Account != nil || !c.check(l) {
				t.Fatalf("login = %+v", l)
			}
			if err := g.rt.CancelLogin(ctx, agent.ProviderCodex, l.LoginID); err != nil {
				t.Fatalf("CancelLogin: %v", err)
			}
			ended := g.ev.Wait(t, realWait, "the canceled login's outcome", func(e agent.Event) bool {
				return e.Kind == agent.EventAccountUpdated && e.LoginID == l.LoginID
			})
			if ended.Error == "" || ended.Account == nil || ended.Account.SignedIn {
				t.Fatalf("canceled login = %+v (account %+v)", ended, ended.Account)
			}
			// A second cancel finds nothing to cancel: not an error.
			if err := g.rt.CancelLogin(ctx, agent.ProviderCodex, l.LoginID); err != nil {
				t.Fatalf("second CancelLogin: %v", err)
			}
		})
	}
	if got := model.DeviceAuthRequests(); len(got) == 0 || got[0] != "/api/accounts/deviceauth/usercode" {
		t.Errorf("device auth requests = %q", got)
	}
	if a := g.account(t); a.SignedIn {
		t.Errorf("account after canceled logins = %+v", a)
	}
}

func TestCodexModelsAndSteer(t *testing.T) {
	var listCalls int
	var mu sync.Mutex
	g, _ := newRealRig(t, func(c *codex.Config) {
		c.RequireSignIn = true // the mock provider needs no sign-in
		c.OnSent = func(method string) {
			if method == "model/list" {
				mu.Lock()
				listCalls++
				mu.Unlock()
			}
		}
	})
	ctx := rctx(t)
	a, err := g.rt.Account(ctx, agent.ProviderCodex)
	if err != nil || !a.SignedIn || a.RequiresAuth {
		t.Fatalf("account on a provider without sign-in = %+v, %v", a, err)
	}
	models, err := g.rt.Models(ctx, agent.ProviderCodex)
	if err != nil {
		t.Fatal(err)
	}
	defaults := 0
	for _, m := range models {
		if m.IsDefault {
			defaults++
		}
		if m.ID == "" || m.Model == "" || m.DisplayName == "" || len(m.ReasoningEfforts) == 0 ||
			!slices.Contains(m.ReasoningEfforts, m.DefaultReasoningEffort) {
			t.Errorf("model %+v", m)
		}
	}
	if len(models) == 0 || defaults != 1 {
		t.Fatalf("models = %+v (%d default)", models, defaults)
	}
	again, _ := g.rt.Models(ctx, agent.ProviderCodex)
	mu.Lock()
	calls := listCalls
	mu.Unlock()
	if calls != 1 || !slices.EqualFunc(models, again, func(a, b agent.Model) bool { return a.ID == b.ID }) {
		t.Fatalf("second Models: %d model/list calls, same list %v", calls, len(again) == len(models))
	}

	// An effort the listed model lacks is refused, naming the ones it has.
	m := models[0]
	_, err = g.rt.Start(ctx, agent.StartInput{Provider: agent.ProviderCodex, Cwd: t.TempDir(),
		Settings: agent.ComposerSettings{Model: m.Model, ReasoningEffort: "none"}})
	if !slices.Contains(m.ReasoningEfforts, "none") &&
		(!errors.Is(err, agent.ErrInvalidSettings) || !strings.Contains(err.Error(), strings.Join(m.ReasoningEfforts, ", "))) {
		t.Fatalf("Start with an effort %s lacks: %v", m.Model, err)
	}

	// Steering: the text joins the running turn as a user item and the
	// turn's next model request carries it.
	thread := g.start(t, readOnly)
	var seq sync.Mutex
	first := true
	g.model.SetReply(func(r codextest.Request) codextest.Reply {
		seq.Lock()
		defer seq.Unlock()
		if first {
			first = false
			return codextest.Reply{Text: "working on it", Delay: 3 * time.Second}
		}
		return codextest.Reply{Text: "steered: " + r.LastUserText()}
	})
	turn := g.send(t, thread, "write a poem", readOnly)
	if _, err := g.model.WaitRequests(ctx, 1); err != nil {
		t.Fatal(err)
	}
	const guidance = "make it rhyme"
	err = g.rt.Steer(ctx, agent.SteerInput{Provider: agent.ProviderCodex, ThreadID: thread, TurnID: "not-this-turn", Text: guidance})
	if !errors.Is(err, agent.ErrTurnNotRunning) {
		t.Fatalf("Steer naming another turn: %v", err)
	}
	t.Logf("Codex's answer to steering another turn than the running one: %v", err)
	if err := g.rt.Steer(ctx, agent.SteerInput{Provider: agent.ProviderCodex, ThreadID: thread, TurnID: turn.ID, Text: guidance}); err != nil {
		t.Fatalf("Steer: %v", err)
	}
	done := g.ev.Wait(t, realWait, "steered turn", codex.TurnDone(turn.ID))
	if done.Status != string(agent.TurnCompleted) {
		t.Fatalf("steered turn = %+v", done)
	}
	g.ev.Wait(t, realWait, "the steered user item", func(e agent.Event) bool {
		return e.Kind == agent.EventItemCompleted && e.TurnID == turn.ID && e.Message.Role == "user" && e.Message.Text == guidance
	})
	reqs := g.model.RequestsFor(thread)
	if texts := reqs[len(reqs)-1].UserTexts(); !slices.Contains(texts, guidance) {
		t.Fatalf("the turn's last model request carries %q, not the steered text", texts)
	}
	// The thread's history keeps it in that turn, after the turn's own
	// text: a fork through this turn carries it.
	hist, err := g.rt.History(ctx, agent.HistoryInput{Provider: agent.ProviderCodex, ThreadID: thread})
	if err != nil || len(hist) != 1 {
		t.Fatalf("history = %+v, %v", hist, err)
	}
	var users []string
	for _, m := range hist[0].Messages {
		if m.Role == "user" {
			users = append(users, m.Text)
		}
	}
	if !slices.Equal(users, []string{"write a poem", guidance}) {
		t.Fatalf("user messages of the steered turn = %q", users)
	}
	err = g.rt.Steer(ctx, agent.SteerInput{Provider: agent.ProviderCodex, ThreadID: thread, TurnID: turn.ID, Text: "too late"})
	if !errors.Is(err, agent.ErrTurnNotRunning) {
		t.Fatalf("Steer of a finished turn: %v", err)
	}
	t.Logf("Codex's answer to steering a finished turn: %v", err)
}
