package server_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"tuttid/codex/codextest"
)

// Issue 23's GUI hooks in Chromium, on the real Codex with its built-in
// "openai" provider pointed at the test model server and no credentials.

// clickButton clicks the shown, enabled button whose text is name.
func (tb *tab) clickButton(name string) {
	tb.t.Helper()
	tb.waitJS("to click the button "+name, fmt.Sprintf(`(() => {
	  const b = [...document.querySelectorAll("button")].find((b) => b.textContent.trim() === %q);
	  if (!b || b.disabled || b.getClientRects().length === 0) return false;
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
