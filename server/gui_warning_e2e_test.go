package server_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestGUIProviderWarning: what Codex warns about (here: the test model's
// unknown metadata, its sandbox set-up) reaches the page as PROVIDER_WARNING
// and is shown once under the top bar, each text once; a dismissed warning
// stays away when Codex repeats it on the next turn.
func TestGUIProviderWarning(t *testing.T) {
	h := startServer(t, harnessOpts{})
	ws := h.createWorkspace("gui-warnings")
	sid := h.startSession(ws, "warned").ID

	browser := startBrowser(t)
	tb := openTab(t, browser, guiServer(t, h))
	tb.open(ws, sid)
	send := func(text string) {
		tb.waitJS("the composer ready", `!document.querySelector('[data-testid="send"]').disabled`)
		tb.run("type and send "+text,
			chromedp.SendKeys(chromedp.CSS(`[data-testid="composer-input"]`), text),
			chromedp.Click(chromedp.CSS(`[data-testid="send"]`)),
		)
		tb.waitJS("the reply to "+text, fmt.Sprintf(`[...document.querySelectorAll('%s [data-testid="turn"][data-status="COMPLETED"] [data-testid="message"][data-role="assistant"]')]
		  .some((m) => m.textContent.includes(%q))`, activeSel(sid), "reply: "+text))
	}
	const shownJS = `JSON.stringify([...document.querySelectorAll('[role="region"][aria-label="Codex warnings"] [role="status"]')].map((w) => w.textContent.replace("×", "").trim()))`
	shown := func() []string {
		var raw string
		tb.eval(shownJS, &raw)
		var texts []string
		if err := json.Unmarshal([]byte(raw), &texts); err != nil {
			tb.fail("warnings %q: %v", raw, err)
		}
		return texts
	}

	send("first")
	tb.waitJS("a warning shown", `document.querySelectorAll('[role="region"][aria-label="Codex warnings"] [role="status"]').length > 0`)
	first := shown()
	seen := map[string]bool{}
	for _, w := range first {
		if len(w) < len("Codex warning: x") || seen[w] {
			t.Errorf("warnings shown %q: each once, with its text", first)
		}
		seen[w] = true
	}
	tb.screenshot("provider-warning.png")

	tb.waitJS("every warning dismissed", `(() => {
	  const b = document.querySelector('[aria-label="Dismiss warning"]');
	  if (b) b.click();
	  return !document.querySelector('[aria-label="Dismiss warning"]');
	})()`)
	send("second")
	time.Sleep(time.Second) // let a repeated warning arrive, were it to be shown
	for _, w := range shown() {
		if seen[w] {
			t.Errorf("the dismissed warning %q is shown again", w)
		}
	}
	tb.noError()
}
