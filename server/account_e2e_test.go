package server_test

import (
	"bytes"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
	"tuttid/store"

	"tuttid/codex/codextest"
)

// Issue 23 end to end: the real Codex app-server with its built-in
// "openai" provider pointed at the test model server, and no credentials.

// lockedLog is the server's whole log (debug level), for grepping.
type lockedLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startLoggedServer is startServer on the given Codex home and model
// server, with the server's log kept at debug level; extraEnv is added to
// Codex's environment.
func startLoggedServer(t *testing.T, model *codextest.ModelServer, home string, extraEnv ...string) (*harness, *lockedLog) {
	t.Helper()
	logs := &lockedLog{}
	h := startServer(t, harnessOpts{model: model, home: home, logTo: logs, codexEnv: extraEnv})
	return h, logs
}

const accountActivityQuery = `subscription($ws: ID!) { activity(workspaceId: $ws) {
  kind seq agentSessionId error
  turn { id status error errorCode }
  session { id tokenUsage { totalTokens contextWindow } }
  account { signedIn requiresOpenaiAuth authMode }
} }`

type accountEvent struct {
	Kind           string
	AgentSessionID string
	Error          *string
	Turn           *struct {
		ID, Status       string
		Error, ErrorCode *string
	}
	Session *struct {
		ID         string
		TokenUsage *struct{ TotalTokens int64 }
	}
	Account *struct {
		SignedIn, RequiresOpenaiAuth bool
		AuthMode                     *string
	}
}

// activityLog collects a subscription's raw payloads and decoded events.
type activityLog struct {
	mu     sync.Mutex
	raw    [][]byte
	events []accountEvent
}

func collectActivity(sub *wsSub) *activityLog {
	l := &activityLog{}
	go func() {
		for r := range sub.C {
			var out struct{ Activity accountEvent }
			_ = json.Unmarshal(r.Data, &out)
			raw, _ := json.Marshal(r)
			l.mu.Lock()
			l.raw, l.events = append(l.raw, raw), append(l.events, out.Activity)
			l.mu.Unlock()
		}
	}()
	return l
}

func (l *activityLog) has(match func(accountEvent) bool) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.events {
		if match(e) {
			return true
		}
	}
	return false
}

func (l *activityLog) bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return bytes.Join(l.raw, []byte("\n"))
}

type codexAccountView struct {
	SignedIn, RequiresOpenaiAuth bool
	AuthMode                     *string
}

func (h *harness) codexAccount() codexAccountView {
	h.t.Helper()
	var out struct{ CodexAccount codexAccountView }
	h.must(`{ codexAccount { signedIn requiresOpenaiAuth authMode } }`, nil, &out)
	return out.CodexAccount
}

type turnHealthView struct {
	ID, Status       string
	Error, ErrorCode *string
}

func (h *harness) turnOf(ws, sessionID, turnID string) turnHealthView {
	h.t.Helper()
	var out struct {
		Session struct{ Turns []turnHealthView }
	}
	h.must(`query($ws: ID!, $id: ID!) { session(workspaceId: $ws, id: $id) { turns { id status error errorCode } } }`,
		map[string]any{"ws": ws, "id": sessionID}, &out)
	for _, tr := range out.Session.Turns {
		if tr.ID == turnID {
			return tr
		}
	}
	return turnHealthView{}
}

// TestCodexSignInE2E: not signed in, every way to run a turn is refused at
// once with agent.provider_not_signed_in; a wrong key ends a turn FAILED
// "unauthorized" after retries reported as TURN_RETRYING and flips the
// account; the right key runs a turn that survives failed requests and
// reports its token usage; the device code and ChatGPT logins answer
// their URL and code and are cancelled. Neither key is in the server's
// log, any error, any activity event or the database file.
func TestCodexSignInE2E(t *testing.T) {
	const goodKey, badKey = "sk-tuttid-e2e-GOOD-5f2c9a", "sk-tuttid-e2e-BAD-81d7e0"
	model := codextest.StartModelServer(t)
	model.SetAPIKey(goodKey)
	home := codextest.NewOpenAICodexHome(t, model.URL())
	h, logs := startLoggedServer(t, model, home, codextest.LoginIssuerEnv+"="+model.IssuerURL())
	var errTexts []string
	try := func(query string, vars map[string]any, out any) []gqlError {
		t.Helper()
		errs := h.do(query, vars, out)
		for _, e := range errs {
			raw, _ := json.Marshal(e)
			errTexts = append(errTexts, string(raw))
		}
		return errs
	}
	ws := h.createWorkspace("w")
	c := h.ws(protoTransportWS)
	acts := collectActivity(c.subscribe(accountActivityQuery, map[string]any{"ws": ws}))

	if a := h.codexAccount(); a.SignedIn || !a.RequiresOpenaiAuth || a.AuthMode != nil {
		t.Fatalf("codexAccount without credentials = %+v", a)
	}
	const startQ = `mutation($in: StartSessionInput!) { startSession(input: $in) { id } }`
	errs := try(startQ, map[string]any{"in": map[string]any{"workspaceId": ws}}, nil)
	if len(errs) != 1 || errs[0].Code() != "agent.provider_not_signed_in" || !strings.Contains(errs[0].Message, "startCodexLogin") {
		t.Fatalf("startSession not signed in = %+v", errs)
	}

	const loginQ = `mutation($in: StartCodexLoginInput!) { startCodexLogin(input: $in) {
		loginId authUrl verificationUrl userCode account { signedIn authMode } } }`
	type loginView struct {
		LoginID, AuthURL, VerificationURL, UserCode *string
		Account                                     *codexAccountView
	}
	login := func(in map[string]any) loginView {
		t.Helper()
		var out struct{ StartCodexLogin loginView }
		if errs := try(loginQ, map[string]any{"in": in}, &out); len(errs) > 0 {
			t.Fatalf("startCodexLogin(%v): %+v", in["method"], errs)
		}
		return out.StartCodexLogin
	}
	cancelLogin := func(id *string) {
		t.Helper()
		if id == nil {
			t.Fatal("no loginId to cancel")
		}
		var out struct{ CancelCodexLogin bool }
		if errs := try(`mutation($id: ID!) { cancelCodexLogin(loginId: $id) }`, map[string]any{"id": *id}, &out); len(errs) > 0 || !out.CancelCodexLogin {
			t.Errorf("cancelCodexLogin = %v, %+v", out, errs)
		}
	}
	dev := login(map[string]any{"method": "DEVICE_CODE"})
	if dev.VerificationURL == nil || dev.UserCode == nil || *dev.UserCode != codextest.DeviceUserCode {
		t.Errorf("device code login = %+v", dev)
	}
	cancelLogin(dev.LoginID)
	chat := login(map[string]any{"method": "CHATGPT"})
	if chat.AuthURL == nil || !strings.HasPrefix(*chat.AuthURL, "http") {
		t.Errorf("ChatGPT login = %+v", chat)
	}
	cancelLogin(chat.LoginID)

	// A wrong key: Codex takes it, the model refuses it.
	if l := login(map[string]any{"method": "API_KEY", "apiKey": badKey}); l.Account == nil || !l.Account.SignedIn {
		t.Fatalf("API key login = %+v", l)
	}
	var started struct{ StartSession struct{ ID string } }
	if errs := try(startQ, map[string]any{"in": map[string]any{"workspaceId": ws}}, &started); len(errs) > 0 {
		t.Fatalf("startSession signed in: %+v", errs)
	}
	sid := started.StartSession.ID
	const sendQ = `mutation($in: SendMessageInput!) { sendMessage(input: $in) { id } }`
	sendVars := func(text string) map[string]any {
		return map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": sid, "text": text}}
	}
	var sent struct{ SendMessage struct{ ID string } }
	if errs := try(sendQ, sendVars("say hi"), &sent); len(errs) > 0 {
		t.Fatalf("sendMessage: %+v", errs)
	}
	refused := sent.SendMessage.ID
	var tr turnHealthView
	h.eventually("the refused turn to fail", 60*time.Second, func() bool {
		tr = h.turnOf(ws, sid, refused)
		return tr.Status == "FAILED"
	})
	if tr.ErrorCode == nil || *tr.ErrorCode != "unauthorized" || tr.Error == nil || *tr.Error == "" {
		t.Errorf("refused turn = %+v; want errorCode unauthorized and Codex's message", tr)
	}
	h.eventually("TURN_RETRYING of the refused turn", 10*time.Second, func() bool {
		return acts.has(func(e accountEvent) bool {
			return e.Kind == "TURN_RETRYING" && e.Turn != nil && e.Turn.ID == refused && e.Error != nil && *e.Error != ""
		})
	})
	h.eventually("the account to flip", 10*time.Second, func() bool { return !h.codexAccount().SignedIn })
	h.eventually("ACCOUNT_UPDATED signed out", 10*time.Second, func() bool {
		return acts.has(func(e accountEvent) bool {
			return e.Kind == "ACCOUNT_UPDATED" && e.Account != nil && !e.Account.SignedIn
		})
	})
	if errs := try(sendQ, sendVars("again"), nil); len(errs) != 1 || errs[0].Code() != "agent.provider_not_signed_in" {
		t.Errorf("sendMessage after refused credentials = %+v", errs)
	}

	// The right key; the model fails a few requests before answering.
	if l := login(map[string]any{"method": "API_KEY", "apiKey": goodKey}); l.Account == nil || !l.Account.SignedIn {
		t.Fatalf("API key login = %+v", l)
	}
	model.FailNext(6, 500, "")
	resets := time.Now().Add(2 * time.Hour).Truncate(time.Second).UTC()
	model.SetRateLimits(&codextest.RateLimitHeaders{PrimaryUsedPercent: 42, PrimaryWindowMinutes: 300, PrimaryResetsAt: resets})
	if errs := try(sendQ, sendVars("say hi"), &sent); len(errs) > 0 {
		t.Fatalf("sendMessage with the right key: %+v", errs)
	}
	ok := sent.SendMessage.ID
	h.eventually("the turn to complete", 90*time.Second, func() bool { return h.turnOf(ws, sid, ok).Status == "COMPLETED" })
	h.eventually("TURN_RETRYING of the completed turn", 10*time.Second, func() bool {
		return acts.has(func(e accountEvent) bool { return e.Kind == "TURN_RETRYING" && e.Turn != nil && e.Turn.ID == ok })
	})
	h.eventually("TOKEN_USAGE_UPDATED", 10*time.Second, func() bool {
		return acts.has(func(e accountEvent) bool {
			return e.Kind == "TOKEN_USAGE_UPDATED" && e.Session != nil && e.Session.TokenUsage != nil && e.Session.TokenUsage.TotalTokens > 0
		})
	})
	var usage struct {
		Session struct{ TokenUsage *struct{ TotalTokens int64 } }
	}
	h.must(`query($ws: ID!, $id: ID!) { session(workspaceId: $ws, id: $id) { tokenUsage { totalTokens } } }`,
		map[string]any{"ws": ws, "id": sid}, &usage)
	if usage.Session.TokenUsage == nil || usage.Session.TokenUsage.TotalTokens == 0 {
		t.Errorf("tokenUsage = %+v", usage.Session.TokenUsage)
	}

	var limits struct {
		RateLimits *struct {
			Primary *struct {
				UsedPercent   float64
				WindowMinutes *int
				ResetsAt      *string
			}
		}
	}
	h.eventually("rateLimits", 10*time.Second, func() bool {
		h.must(`{ rateLimits { primary { usedPercent windowMinutes resetsAt } } }`, nil, &limits)
		return limits.RateLimits != nil && limits.RateLimits.Primary != nil
	})
	if p := limits.RateLimits.Primary; p.UsedPercent != 42 || p.WindowMinutes == nil || *p.WindowMinutes != 300 ||
		p.ResetsAt == nil || *p.ResetsAt != resets.Format(time.RFC3339) {
		t.Errorf("rateLimits.primary = %+v (%v), want 42%% of 300 min resetting at %s", p, deref(p.ResetsAt), resets.Format(time.RFC3339))
	}

	// Neither key anywhere tuttid writes or answers.
	db := h.databaseBytes()
	for _, key := range []string{goodKey, badKey} {
		if bytes.Contains(db, []byte(hex.EncodeToString([]byte(key)))) {
			t.Errorf("the API key %q is in the database (hex, as PostgreSQL prints bytea)", key)
		}
		for what, text := range map[string][]byte{
			"server log": []byte(logs.String()), "errors": []byte(strings.Join(errTexts, "\n")),
			"activity events": acts.bytes(), "database file": db,
		} {
			if bytes.Contains(text, []byte(key)) {
				t.Errorf("the API key %q is in the %s", key, what)
			}
		}
	}
	if len(acts.bytes()) == 0 || !strings.Contains(logs.String(), "login started") {
		t.Error("nothing collected to grep")
	}
}

// databaseBytes is everything the server's database holds: the SQLite
// files' bytes, or every PostgreSQL table's rows as text (bytea columns
// print as hex).
func (h *harness) databaseBytes() []byte {
	h.t.Helper()
	if h.srv.Store.Dialect() != store.Postgres {
		var db []byte
		for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
			b, err := os.ReadFile(h.dbPath + suffix)
			if err == nil {
				db = append(db, b...)
			} else if suffix == "" {
				h.t.Fatal(err)
			}
		}
		return db
	}
	ctx := h.t.Context()
	rows, err := h.srv.Store.DB.QueryContext(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`)
	if err != nil {
		h.t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			h.t.Fatal(err)
		}
		tables = append(tables, name)
	}
	rows.Close()
	var db []byte
	for _, table := range tables {
		var text sql.NullString
		if err := h.srv.Store.DB.QueryRowContext(ctx, `SELECT string_agg(t::text, E'\n') FROM "`+table+`" t`).Scan(&text); err != nil {
			h.t.Fatal(err)
		}
		db = append(db, text.String...)
	}
	if len(tables) == 0 || len(db) == 0 {
		h.t.Fatal("the database holds nothing to search")
	}
	return db
}
