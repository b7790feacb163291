package server_test

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestGUIStopExploration: in the exploration view of three branches under
// a bound of one turn, one running at Codex and two queued, `Stop all`
// interrupts the running branch and stops the queued ones: the view says
// so, settles, shows the two as stopped before they started, and offers
// `Stop all` no more.
func TestGUIStopExploration(t *testing.T) {
	h := startServer(t, harnessOpts{maxTurns: 1})
	browser := startBrowser(t)
	repo := gitRepo(t)
	ws := h.createWorkspaceAt("gui-stop", repo, "")
	parent := h.startSession(ws, "parent")
	turn1 := h.send(ws, parent.ID, "hello")
	slowBranchTurns(h.model, time.Minute)
	x, _, errs := h.explore(map[string]any{"workspaceId": ws, "agentSessionId": parent.ID, "requestId": "gui-stop-1", "lastTurnId": turn1,
		"prompt": slowBranchPrompt, "checkCommand": "", "branches": branches(3, nil)})
	if len(errs) > 0 {
		t.Fatalf("exploreSession: %+v", errs)
	}
	h.eventually("one branch running at Codex", time.Minute, func() bool { return slowRequests(h.model) == 1 })

	tb := openTab(t, browser, guiServer(t, h))
	tb.run("open the exploration",
		chromedp.Navigate(tb.url+"/app/#w="+ws+"&s="+parent.ID+"&x="+x.ID),
		chromedp.WaitVisible(chromedp.CSS(`section[aria-label="Exploration"][data-state="RUNNING"]`)),
	)
	tb.clickButton("Stop all")
	tb.waitJS("the view stopped and settled", `(() => {
	  const x = document.querySelector('section[aria-label="Exploration"]');
	  const outcome = document.querySelector('[role="status"][data-testid="stop-outcome"]');
	  const stopped = [...x.querySelectorAll('[data-testid="branch-state"]')].filter((s) => s.textContent === "Stopped before it started");
	  const stop = [...x.querySelectorAll("button")].some((b) => b.textContent.trim() === "Stop all");
	  return x.dataset.state === "SETTLED" && !!outcome && outcome.textContent.includes("interrupted") && stopped.length === 2 && !stop;
	})()`)
	tb.screenshot("exploration-stopped.png")
	tb.noError()
}
