package server_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"tuttid/codex/codextest"
)

// Issue 23's GUI hooks in Chromium, on the real Codex with its built-in
// "openai" provider pointed at the test model server and no credentials.

// clickButton clicks the shown, enabled button (neither disabled nor
// aria-disabled) whose text is name.
func (tb *tab) clickButton(name string) {
	tb.t.Helper()
	tb.waitJS("to click the button "+name, fmt.Sprintf(`(() => {
	  const b = [...document.querySelectorAll("button")].find((b) => b.textContent.trim() === %q);
	  if (!b || b.disabled || b.getAttribute("aria-disabled") === "true" || b.getClientRects().length === 0) return false;
	  b.click();
	  return true;
	})()`, name))
}

const codexDialogSel = `[role="dialog"][data-testid="codex-sign-in"]`

// TestGUICodexSignIn: a person on a Codex without credentials sees the
// `Sign in to Codex` dialog, gets a device code and cancels it, closes the
// dialog, has it opened again by New session (agent.provider_not_signed_in),
// signs in with an API key (the dialog closes, the top bar shows the
// account and `Sign out`), starts a session, and signs out (the dialog is
// back). The key is in no storage, address, cookie or server log.
func TestGUICodexSignIn(t *testing.T) {
	const key = "sk-tuttid-gui-KEY-3b9e41"
	model := codextest.StartModelServer(t)
	model.SetAPIKey(key)
	home := codextest.NewOpenAICodexHome(t, model.URL())
	h, logs := startLoggedServer(t, model, home, codextest.LoginIssuerEnv+"="+model.IssuerURL())
	ws := h.createWorkspace("gui-sign-in")

	browser := startBrowser(t)
	tb := openTab(t, browser, guiServer(t, h))
	tb.run("load the GUI", chromedp.Navigate(tb.url+"/app/#w="+ws), chromedp.WaitVisible(chromedp.CSS(codexDialogSel)))
	if names := tb.axNames("dialog"); !slices.Contains(names, "Sign in to Codex") {
		tb.fail("dialogs = %q, want one named Sign in to Codex", names)
	}
	var fields []string
	tb.eval(`[...document.querySelectorAll('input[type="password"]')].map((i) => i.labels[0]?.textContent.trim() ?? "")`, &fields)
	if !slices.Contains(fields, "API key") {
		tb.fail("password fields labelled %q, want API key", fields)
	}

	// A device code: the code Codex returns is shown, then cancelled.
	tb.clickButton("Use a device code")
	tb.waitJS("the device code", fmt.Sprintf(`document.querySelector('[data-testid="codex-user-code"]')?.textContent === %q`, codextest.DeviceUserCode))
	tb.clickButton("Cancel sign-in")
	tb.waitJS("the login cancelled", `!document.querySelector('[data-testid="codex-login-pending"]')`)

	// Closed, then opened again by an operation Codex cannot run.
	tb.clickButton("Not now")
	tb.waitJS("the dialog closed", fmt.Sprintf(`!document.querySelector(%q)`, codexDialogSel))
	tb.click("new session", `[data-testid="new-session"]`)
	tb.waitJS("the dialog opened by New session", fmt.Sprintf(
		`document.querySelector(%q)?.querySelector('[data-testid="codex-sign-in-error"]')?.textContent.includes("startCodexLogin")`, codexDialogSel))

	// The API key: the dialog closes, the top bar shows the account.
	tb.run("type the key", chromedp.SendKeys(chromedp.CSS(`#codex-api-key`), key))
	tb.clickButton("Use API key")
	tb.waitJS("the dialog closed by the sign-in", fmt.Sprintf(`!document.querySelector(%q)`, codexDialogSel))
	tb.waitJS("the account in the top bar", `(() => {
	  const a = document.querySelector('[data-testid="codex-account"][data-signed-in="true"]');
	  return !!a && a.textContent.includes("apiKey") && [...a.querySelectorAll("button")].some((b) => b.textContent.trim() === "Sign out");
	})()`)
	if a := h.codexAccount(); !a.SignedIn {
		tb.fail("codexAccount after the GUI's sign-in = %+v", a)
	}

	// Signed in, New session works.
	tb.click("new session", `[data-testid="new-session"]`)
	tb.waitJS("the new session shown", `(() => { const s = document.querySelector('[data-testid="active-session"]'); return !s.hidden && !!s.dataset.sessionId; })()`)
	tb.noError()

	var kept string
	tb.eval(`JSON.stringify([location.href, document.cookie, Object.entries(localStorage), Object.entries(sessionStorage), history.state])`, &kept)
	if strings.Contains(kept, key) {
		tb.fail("the key is kept by the page: %s", kept)
	}

	// Signing out brings the dialog back.
	tb.clickButton("Sign out")
	tb.run("the dialog after sign-out", chromedp.WaitVisible(chromedp.CSS(codexDialogSel)))
	tb.waitJS("the top bar signed out", `!!document.querySelector('[data-testid="codex-account"][data-signed-in="false"]')`)
	tb.noError()

	tb.mu.Lock()
	pageLog := strings.Join(tb.logs, "\n")
	tb.mu.Unlock()
	if strings.Contains(pageLog, key) || strings.Contains(logs.String(), key) {
		t.Errorf("the key is in the page's console or the server's log")
	}
}

// setField sets a form control's value as a person's typing or choosing
// does (React sees the input or change event).
func (tb *tab) setField(sel, value string) {
	tb.t.Helper()
	tb.waitJS("to set "+sel, fmt.Sprintf(`(() => {
	  const el = document.querySelector(%q);
	  if (!el || el.disabled) return false;
	  const proto = el instanceof HTMLSelectElement ? HTMLSelectElement.prototype : el instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
	  Object.getOwnPropertyDescriptor(proto, "value").set.call(el, %q);
	  el.dispatchEvent(new Event(el instanceof HTMLSelectElement ? "change" : "input", { bubbles: true }));
	  return true;
	})()`, sel, value))
}

// clickRadio clicks the radio labelled label inside the radio group named
// group.
func (tb *tab) clickRadio(scope, group, label string) {
	tb.t.Helper()
	tb.waitJS("to choose "+label, fmt.Sprintf(`(() => {
	  const g = document.querySelector(%q + ' [role="radiogroup"][aria-label=%q]');
	  const l = g && [...g.querySelectorAll("label")].find((l) => l.textContent.trim() === %q);
	  if (!l) return false;
	  l.querySelector("input").click();
	  return true;
	})()`, scope, group, label))
}

// pickEffort is want when m offers it, else m's first effort. (Codex
// 0.169.0 sends an effort past xhigh to the model as xhigh.)
func pickEffort(m guiModel, want string) string {
	if slices.Contains(m.ReasoningEfforts, want) {
		return want
	}
	return m.ReasoningEfforts[0]
}

type guiModel struct {
	Model                  string
	IsDefault              bool
	ReasoningEfforts       []string
	DefaultReasoningEffort *string
}

type settingsView struct {
	Model, ReasoningEffort, PermissionModeID *string
	PlanMode                                 bool
}

func (h *harness) settingsOf(ws, id string) settingsView {
	h.t.Helper()
	var out struct {
		Session struct{ Settings settingsView }
	}
	h.must(`query($ws: ID!, $id: ID!) { session(workspaceId: $ws, id: $id) { settings { model reasoningEffort permissionModeId planMode } } }`,
		map[string]any{"ws": ws, "id": id}, &out)
	return out.Session.Settings
}

// TestGUISessionSettings: New session on a chosen model and effort (the
// header shows both); the fork dialog, opened by Fork from here on its
// turn, starts from the parent's settings;
// a fork made there with another model, effort and Full access has them,
// and its next turn reaches the model server with that model and effort;
// then the header's Context meter and the top bar's Usage meter show.
func TestGUISessionSettings(t *testing.T) {
	const key = "sk-tuttid-gui-KEY-settings"
	model := codextest.StartModelServer(t)
	model.SetAPIKey(key)
	home := codextest.NewOpenAICodexHome(t, model.URL())
	h, _ := startLoggedServer(t, model, home)
	h.must(`mutation($in: StartCodexLoginInput!) { startCodexLogin(input: $in) { loginId } }`,
		map[string]any{"in": map[string]any{"method": "API_KEY", "apiKey": key}}, nil)
	var ms struct{ Models []guiModel }
	h.must(`{ models { model isDefault reasoningEfforts defaultReasoningEffort } }`, nil, &ms)
	// Two models with at least two efforts each: a, then b for the fork.
	var picked []guiModel
	for _, m := range ms.Models {
		if len(m.ReasoningEfforts) >= 2 {
			picked = append(picked, m)
		}
	}
	if len(picked) < 2 {
		t.Fatalf("models = %+v, want two with efforts", ms.Models)
	}
	a, b := picked[0], picked[1]
	effortA, effortB := pickEffort(a, "low"), pickEffort(b, "high")
	ws := h.createWorkspace("gui-settings")

	browser := startBrowser(t)
	tb := openTab(t, browser, guiServer(t, h))
	tb.run("load the GUI", chromedp.Navigate(tb.url+"/app/#w="+ws),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="connection"][data-state="live"]`)))
	tb.waitJS("the models offered", fmt.Sprintf(`[...document.querySelectorAll("#new-models option")].some((o) => o.value === %q)`, b.Model))
	tb.click("the settings", `[data-testid="new-session-settings"] summary`)
	for _, name := range []string{"Model", "Reasoning effort"} {
		if names := tb.axNames("combobox"); !slices.Contains(names, name) {
			tb.fail("comboboxes = %q, want %s", names, name)
		}
	}
	tb.setField(`[data-testid="new-model"]`, a.Model)
	tb.setField(`[data-testid="new-effort"]`, effortA)
	tb.clickRadio(`[data-testid="new-settings"]`, "Permissions", "Workspace write")
	tb.click("new session", `[data-testid="new-session"]`)
	parentID := tb.waitActiveOther("")
	tb.waitJS("the header's model and effort", fmt.Sprintf(`document.querySelector('[data-testid="session-model"]')?.textContent === %q`, a.Model+" · "+effortA))
	if s := h.settingsOf(ws, parentID); s.Model == nil || *s.Model != a.Model || s.ReasoningEffort == nil || *s.ReasoningEffort != effortA {
		t.Fatalf("new session's settings = %+v", s)
	}
	first := h.send(ws, parentID, "first")

	// Fork from here (issue 24: the one fork dialog, from a turn too).
	tb.click("fork from here", forkFromHereSel(first))
	tb.waitJS("the fork dialog from the turn", fmt.Sprintf(`document.querySelector('[role="dialog"][data-testid="fork-dialog"]')?.dataset.turnId === %q`, first))
	var start []any
	tb.eval(`[document.querySelector('[data-testid="fork-model"]').value, document.querySelector('[data-testid="fork-effort"]').value,
	  document.querySelector('[data-testid="fork-settings"] input[type="radio"]:checked').value, document.querySelector('[data-testid="fork-plan"]').checked]`, &start)
	if fmt.Sprint(start) != fmt.Sprint([]any{a.Model, effortA, "workspace-write", false}) {
		tb.fail("the fork dialog starts from %v, want the parent's settings", start)
	}
	tb.setField(`[data-testid="fork-model"]`, b.Model)
	tb.setField(`[data-testid="fork-effort"]`, effortB)
	tb.clickRadio(`[data-testid="fork-settings"]`, "Permissions", "Full access")
	tb.click("Fork", `[data-testid="fork-dialog-submit"]`)
	childID := tb.waitActiveOther(parentID)
	if v := h.lineage(ws, childID); v.ForkedFrom == nil || v.ForkedFrom.LastTurnID == nil || *v.ForkedFrom.LastTurnID != first {
		t.Fatalf("the fork from the dialog = %+v, want lastTurnId %s", v.ForkedFrom, first)
	}
	tb.waitJS("the fork's model and effort", fmt.Sprintf(`document.querySelector('[data-testid="session-model"]')?.textContent === %q`, b.Model+" · "+effortB))
	s := h.settingsOf(ws, childID)
	if s.Model == nil || *s.Model != b.Model || s.ReasoningEffort == nil || *s.ReasoningEffort != effortB || s.PermissionModeID == nil || *s.PermissionModeID != "full-access" {
		t.Fatalf("fork's settings = %+v", s)
	}
	model.ForgetRequests()
	resets := time.Now().Add(2 * time.Hour).Truncate(time.Second).UTC()
	model.SetRateLimits(&codextest.RateLimitHeaders{PrimaryUsedPercent: 42, PrimaryWindowMinutes: 300, PrimaryResetsAt: resets})
	h.send(ws, childID, "second")
	reqs := model.Requests()
	if len(reqs) == 0 {
		t.Fatal("no model request for the fork's turn")
	}
	var sent struct {
		Model     string
		Reasoning struct{ Effort string }
	}
	if err := json.Unmarshal(reqs[len(reqs)-1].Body, &sent); err != nil || sent.Model != b.Model || sent.Reasoning.Effort != effortB {
		t.Errorf("the fork's turn asked the model server for model %q effort %q (%v), want %s and %s", sent.Model, sent.Reasoning.Effort, err, b.Model, effortB)
	}

	// The meters: the fork's context use in its header, the account's
	// usage (with its reset time) in the top bar.
	tb.waitJS("the Context meter", `(() => {
	  const m = document.querySelector('[data-testid="active-session"] [role="meter"][aria-label="Context"]');
	  return !!m && Number(m.getAttribute("aria-valuenow")) >= 0 && m.getAttribute("aria-valuetext").includes("tokens");
	})()`)
	tb.waitJS("the Usage meter", `(() => {
	  const m = document.querySelector('.topbar [role="meter"][aria-label="Usage"]');
	  return !!m && m.getAttribute("aria-valuenow") === "42" && m.getAttribute("aria-valuetext").includes("resets");
	})()`)
	for _, name := range []string{"Context", "Usage"} {
		if names := tb.axNames("meter"); !slices.Contains(names, name) {
			tb.fail("meters = %q, want one named %s", names, name)
		}
	}
	tb.noError()
}

// TestGUITurnHealthAndSteer: a model request Codex retries shows its
// message inside the running turn; Steer (beside Stop while the turn runs)
// adds the typed text to the running turn, which keeps running until
// Stop.
func TestGUITurnHealthAndSteer(t *testing.T) {
	const key, slow, steer = "sk-tuttid-gui-KEY-steer", "slow work please", "also mind the tests"
	model := codextest.StartModelServer(t)
	model.SetAPIKey(key)
	model.SetReply(func(r codextest.Request) codextest.Reply {
		if slices.Contains(r.UserTexts(), slow) {
			return codextest.Reply{Chunks: []string{"working on it", " and done"}, Delay: time.Minute}
		}
		return codextest.DefaultReply(r)
	})
	home := codextest.NewOpenAICodexHome(t, model.URL())
	h, _ := startLoggedServer(t, model, home)
	h.must(`mutation($in: StartCodexLoginInput!) { startCodexLogin(input: $in) { loginId } }`,
		map[string]any{"in": map[string]any{"method": "API_KEY", "apiKey": key}}, nil)
	ws := h.createWorkspace("gui-health")
	sid := h.startSession(ws, "health").ID

	browser := startBrowser(t)
	tb := openTab(t, browser, guiServer(t, h))
	tb.open(ws, sid)
	model.FailNext(6, 500, "")
	tb.run("type and send",
		chromedp.SendKeys(chromedp.CSS(`[data-testid="composer-input"]`), slow),
		chromedp.Click(chromedp.CSS(`[data-testid="send"]`)),
	)
	running := activeSel(sid) + ` [data-testid="turn"][data-status="IN_PROGRESS"]`
	tb.run("wait for the running turn", chromedp.WaitVisible(chromedp.CSS(running)))
	tb.waitJS("the retry message on the running turn", fmt.Sprintf(`(document.querySelector(%q)?.textContent ?? "").length > "Codex is retrying: ".length`,
		running+` [data-testid="turn-retrying"]`))
	tb.run("the first words", chromedp.WaitVisible(chromedp.CSS(running+` [data-testid="message"][data-role="assistant"]`)))

	var buttons []string
	tb.eval(`[...document.querySelectorAll('[data-testid="composer"] button')].filter((b) => !b.hidden).map((b) => b.textContent.trim())`, &buttons)
	if !slices.Equal(buttons, []string{"Steer", "Stop"}) {
		tb.fail("composer buttons while running = %q, want Steer beside Stop", buttons)
	}
	tb.run("type the steer", chromedp.SendKeys(chromedp.CSS(`[data-testid="composer-input"]`), steer))
	tb.clickButton("Steer")
	tb.waitJS("the steered text in the running turn", fmt.Sprintf(
		`[...document.querySelectorAll(%q)].some((m) => m.textContent.includes(%q))`, running+` [data-testid="message"][data-role="user"]`, steer))
	tb.waitJS("the composer cleared", `document.querySelector('[data-testid="composer-input"]').value === ""`)
	tb.noError()

	tb.clickButton("Stop")
	tb.run("the turn interrupted", chromedp.WaitVisible(chromedp.CSS(activeSel(sid)+` [data-testid="turn"][data-status="INTERRUPTED"]`)))
	tb.waitJS("no retry message on the ended turn", `!document.querySelector('[data-testid="turn-retrying"]')`)
	tb.noError()
}

// TestGUITurnUnauthorized: Codex signed in with a key the model refuses.
// The turn sent from the composer ends FAILED, showing Codex's message and
// errorCode unauthorized on the turn, and the `Sign in to Codex` dialog
// opens by itself (the refusal flipped the account); signing in there with
// the right key lets the next turn complete.
func TestGUITurnUnauthorized(t *testing.T) {
	const goodKey, badKey = "sk-tuttid-gui-KEY-good-7d1e", "sk-tuttid-gui-KEY-bad-03aa"
	model := codextest.StartModelServer(t)
	model.SetAPIKey(goodKey)
	home := codextest.NewOpenAICodexHome(t, model.URL())
	h, _ := startLoggedServer(t, model, home)
	h.must(`mutation($in: StartCodexLoginInput!) { startCodexLogin(input: $in) { loginId } }`,
		map[string]any{"in": map[string]any{"method": "API_KEY", "apiKey": badKey}}, nil)
	ws := h.createWorkspace("gui-unauthorized")
	sid := h.startSession(ws, "refused").ID

	browser := startBrowser(t)
	tb := openTab(t, browser, guiServer(t, h))
	tb.open(ws, sid)
	tb.run("type and send",
		chromedp.SendKeys(chromedp.CSS(`[data-testid="composer-input"]`), "say hi"),
		chromedp.Click(chromedp.CSS(`[data-testid="send"]`)),
	)
	// Codex retries the refused request before it gives up.
	var refused string
	h.eventually("the refused turn to fail", 90*time.Second, func() bool {
		for _, tr := range h.session(ws, sid).Turns {
			if tr.Status == "FAILED" {
				refused = tr.ID
				return true
			}
		}
		return false
	})
	tb.waitJS("the failed turn's error on the turn", fmt.Sprintf(`(() => {
	  const e = document.querySelector(%q);
	  return !!e && e.dataset.errorCode === "unauthorized" && e.textContent.replace("(unauthorized)", "").trim().length > 0;
	})()`, turnSel(refused)+` [data-testid="turn-error"]`))
	tb.run("the sign-in dialog opened by the refusal", chromedp.WaitVisible(chromedp.CSS(codexDialogSel)))
	if names := tb.axNames("dialog"); !slices.Contains(names, "Sign in to Codex") {
		tb.fail("dialogs = %q, want Sign in to Codex", names)
	}
	tb.screenshot("turn-unauthorized.png")

	tb.run("type the right key", chromedp.SendKeys(chromedp.CSS(`#codex-api-key`), goodKey))
	tb.clickButton("Use API key")
	tb.waitJS("the dialog closed by the sign-in", fmt.Sprintf(`!document.querySelector(%q)`, codexDialogSel))
	tb.waitJS("the composer ready", `!document.querySelector('[data-testid="send"]').disabled`)
	tb.run("send again",
		chromedp.SendKeys(chromedp.CSS(`[data-testid="composer-input"]`), "say hi again"),
		chromedp.Click(chromedp.CSS(`[data-testid="send"]`)),
	)
	tb.waitJS("the reply", fmt.Sprintf(`[...document.querySelectorAll('%s [data-testid="turn"][data-status="COMPLETED"] [data-testid="message"][data-role="assistant"]')]
	  .some((m) => m.textContent.includes("reply: say hi again"))`, activeSel(sid)))
	tb.noError()
}

// TestGUISteerThenFork: text steered into a running turn from the composer
// becomes a user message of that turn, which goes on and completes; `Fork
// from here` on it (the fork dialog's Fork) gives a child whose history
// carries the steered text.
func TestGUISteerThenFork(t *testing.T) {
	const slow, steer = "work slowly please", "and keep the tests green"
	h := startServer(t, harnessOpts{})
	h.model.SetReply(func(r codextest.Request) codextest.Reply {
		if r.LastUserText() == slow {
			// Held open long enough to steer, then done: Codex sends the
			// steered text in the turn's next request.
			return codextest.Reply{Chunks: []string{"working on it", " and done"}, Delay: 5 * time.Second}
		}
		return codextest.DefaultReply(r)
	})
	ws := h.createWorkspace("gui-steer-fork")
	sid := h.startSession(ws, "steered").ID

	browser := startBrowser(t)
	tb := openTab(t, browser, guiServer(t, h))
	tb.open(ws, sid)
	tb.run("type and send",
		chromedp.SendKeys(chromedp.CSS(`[data-testid="composer-input"]`), slow),
		chromedp.Click(chromedp.CSS(`[data-testid="send"]`)),
	)
	running := activeSel(sid) + ` [data-testid="turn"][data-status="IN_PROGRESS"]`
	tb.run("the first words", chromedp.WaitVisible(chromedp.CSS(running+` [data-testid="message"][data-role="assistant"]`)))
	var turn string
	tb.eval(fmt.Sprintf(`document.querySelector(%q).dataset.turnId`, running), &turn)
	tb.run("type the steer", chromedp.SendKeys(chromedp.CSS(`[data-testid="composer-input"]`), steer))
	tb.clickButton("Steer")
	h.waitTurn(ws, sid, turn, "COMPLETED")
	tb.waitJS("the steered text in the completed turn", fmt.Sprintf(
		`[...document.querySelectorAll(%q)].some((m) => m.textContent.includes(%q))`, turnSel(turn)+`[data-status="COMPLETED"] [data-testid="message"][data-role="user"]`, steer))

	tb.click("fork from here", forkFromHereSel(turn))
	tb.forkInDialog()
	child := tb.waitActiveOther(sid)
	if got := h.lineage(ws, child).userTexts(); !slices.Contains(got, steer) {
		t.Errorf("the fork's history = %q, want the steered text %q", got, steer)
	}
	tb.waitJS("the steered text in the child's inherited turn", fmt.Sprintf(
		`[...document.querySelectorAll('%s [data-inherited="true"] [data-testid="message"][data-role="user"]')].some((m) => m.textContent.includes(%q))`, activeSel(child), steer))
	tb.noError()
}
