package server_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// press sends keys to the focused element, as a keyboard does.
func (tb *tab) press(what, keys string) {
	tb.t.Helper()
	tb.run("press "+what, chromedp.KeyEvent(keys))
}

// focused reports whether the focused element satisfies pred (a JavaScript
// expression of el, the focused element).
func (tb *tab) focused(pred string) bool {
	tb.t.Helper()
	var ok bool
	tb.eval(fmt.Sprintf(`((el) => !!el && el !== document.body && !!(%s))(document.activeElement)`, pred), &ok)
	return ok
}

// describeFocus names the focused element for a failure message.
func (tb *tab) describeFocus() string {
	tb.t.Helper()
	var s string
	tb.eval(`((el) => !el ? "nothing" : el === document.body ? "the body" :
	  el.tagName.toLowerCase() + (el.dataset.testid ? "[data-testid=" + el.dataset.testid + "]" : "") +
	  ' "' + (el.getAttribute("aria-label") || el.textContent || "").trim().slice(0, 40) + '"')(document.activeElement)`, &s)
	return s
}

// tabTo presses Tab until the focused element satisfies pred, at most
// limit times; it returns how many presses it took.
func (tb *tab) tabTo(what, pred string, limit int) int {
	tb.t.Helper()
	for i := 1; i <= limit; i++ {
		tb.press("Tab", kb.Tab)
		if tb.focused(pred) {
			return i
		}
	}
	tb.fail("%d presses of Tab did not reach %s (focus on %s)", limit, what, tb.describeFocus())
	return 0
}

// inBranch is a JavaScript predicate of el: el is the button named name
// in branch's group.
func inBranch(branch, name string) string {
	return fmt.Sprintf(`el.closest(%q) && el.tagName === "BUTTON" && el.textContent.trim() === %q`, branchGroupSel(branch), name)
}

// TestGUIExploreEightByKeyboard: issue 32's "works at 8 branches on a
// 1280 px screen and by keyboard", in Chromium on the real Codex. By
// keyboard only: Tab reaches `Explore from here`, Enter opens the Explore
// dialog, which takes focus (its Prompt); Escape closes it and focus is
// back on `Explore from here`; Enter opens it again; the prompt is typed;
// `Add branch` pressed until 8 branches, when it is disabled (the 9th is
// refused) and focus moves to the new branch's Name; the check typed;
// Start pressed. The view takes focus; with the server's bound of 4
// turns, four branches run and four show their place in the queue (1st
// to 4th); at 1280 px the page has no horizontal overflow, each group's
// buttons are inside the viewport and every group can be scrolled into
// view. Then, by keyboard again, `Mark winner`, `and tell the parent`
// (Space) and `Apply to parent` on the best branch; focus stays on each
// control through its action.
func TestGUIExploreEightByKeyboard(t *testing.T) {
	h := startServer(t, harnessOpts{})
	browser := startBrowser(t)
	repo := plainRepo(t)
	ws := h.createWorkspaceAt("gui-explore-eight", repo, "")
	parent := h.startSession(ws, "parent")
	turn := h.send(ws, parent.ID, "hello")
	held := newHeldFirstRequests(t)
	h.model.SetModelReply("mock-model", held.reply("printf 'exit 0\\n' > check.sh", "wrote a passing check"))

	tb := openTab(t, browser, guiServer(t, h))
	tb.open(ws, parent.ID)
	tb.run("the turn", chromedp.WaitVisible(chromedp.CSS(turnSel(turn)+`[data-status="COMPLETED"]`)))
	var width int
	tb.eval(`window.innerWidth`, &width)
	if width != 1280 {
		tb.fail("the window is %d px wide, want 1280", width)
	}

	// The dialog by keyboard: opened, closed by Escape, opened again.
	isOpener := fmt.Sprintf(`el.matches(%q)`, exploreFromHereSel(turn))
	inDialog := `el.closest('[role="dialog"][data-testid="explore-dialog"]')`
	tb.tabTo("Explore from here", isOpener, 100)
	tb.press("Enter", kb.Enter)
	tb.waitJS("the dialog to take focus", `((el) => !!el && el.matches('[role="dialog"] textarea[aria-label="Prompt"]'))(document.activeElement)`)
	tb.press("Escape", kb.Escape)
	tb.waitJS("the dialog closed by Escape", `!document.querySelector('[data-testid="explore-dialog"]')`)
	if !tb.focused(isOpener) {
		tb.fail("after Escape focus is on %s, want Explore from here", tb.describeFocus())
	}
	tb.press("Enter", kb.Enter)
	tb.waitJS("the dialog again, focused", `((el) => !!el && el.matches('[role="dialog"] textarea[aria-label="Prompt"]'))(document.activeElement)`)
	tb.press("the prompt", "write check.sh")

	// Add branch until 8: then disabled, focus on branch 8's Name.
	tb.tabTo("Add branch", inDialog+` && el.tagName === "BUTTON" && el.textContent.trim() === "Add branch"`, 60)
	for range 6 {
		tb.press("Enter on Add branch", kb.Enter)
	}
	tb.waitJS("8 branches", `document.querySelectorAll('[role="dialog"] [data-testid="explore-branch"]').length === 8`)
	var addDisabled bool
	tb.eval(`[...document.querySelectorAll('[role="dialog"] button')].find((b) => b.textContent.trim() === "Add branch").disabled`, &addDisabled)
	if !addDisabled {
		tb.fail("Add branch is enabled at 8 branches")
	}
	if groups := tb.axNames("group"); !slices.Contains(groups, "Branch 8") || slices.Contains(groups, "Branch 9") {
		tb.fail("the dialog's groups = %q, want Branch 1 to Branch 8", groups)
	}
	if !tb.focused(`el.matches('[data-testid="explore-7-name"]')`) {
		tb.fail("after the 8th branch focus is on %s, want branch 8's Name", tb.describeFocus())
	}
	tb.tabTo("Check command", inDialog+` && el.matches('input[aria-label="Check command"]')`, 100)
	tb.press("the check", "sh check.sh")
	tb.tabTo("Start", inDialog+` && el.tagName === "BUTTON" && el.textContent.trim() === "Start"`, 10)
	tb.press("Enter on Start", kb.Enter)

	// The view takes focus; four run, four queued with their places.
	groupsSel := explorationSel + ` [role="group"][data-branch-name]`
	tb.waitJS("the view with 8 branches", fmt.Sprintf(`document.querySelectorAll(%q).length === 8 && !document.querySelector('[data-testid="explore-dialog"]')`, groupsSel))
	tb.waitJS("the view to take focus", fmt.Sprintf(`!!document.activeElement?.closest(%q)`, explorationSel))
	h.eventually("four first requests held", time.Minute, func() bool { return held.held.Load() == 4 })
	var states struct{ Running, Queued []string }
	tb.waitJS("four running, four queued 1st to 4th", fmt.Sprintf(`(() => {
	  const gs = [...document.querySelectorAll(%q)];
	  const text = (g) => g.querySelector('[data-testid="branch-state"]').textContent;
	  const running = gs.filter((g) => g.dataset.state === "RUNNING" && text(g) === "Running");
	  const queued = gs.filter((g) => g.dataset.state === "QUEUED").map(text).sort();
	  return running.length === 4 && queued.join("|") === "Queued (1st in line)|Queued (2nd in line)|Queued (3rd in line)|Queued (4th in line)";
	})()`, groupsSel))
	tb.eval(fmt.Sprintf(`(() => { const gs = [...document.querySelectorAll(%q)];
	  const text = (g) => g.querySelector('[data-testid="branch-state"]').textContent;
	  return { running: gs.filter((g) => g.dataset.state === "RUNNING").map(text), queued: gs.filter((g) => g.dataset.state === "QUEUED").map(text) }; })()`, groupsSel), &states)
	t.Logf("while held: running %q, queued %q", states.Running, states.Queued)
	checkEightFit(tb, groupsSel)
	tb.screenshot("explore-eight-queued.png")
	held.release()

	tb.waitJSFor("the eight checks passed", fmt.Sprintf(`(() => {
	  const gs = [...document.querySelectorAll(%q)];
	  return gs.length === 8 && gs.every((g) => g.querySelector('[data-testid="branch-check"] summary')?.textContent.includes("Check passed"));
	})()`, groupsSel), 4*time.Minute)
	checkEightFit(tb, groupsSel)
	tb.screenshot("explore-eight-checked.png")

	// Mark winner, and tell the parent, Apply to parent: by keyboard on
	// the best branch; focus stays on each control through its action.
	var best string
	tb.eval(fmt.Sprintf(`document.querySelector(%q).dataset.branchName`, groupsSel), &best)
	tb.press("Escape", kb.Escape) // nothing to close: focus stays in the view
	tb.tabTo("Mark winner on "+best, inBranch(best, "Mark winner"), 60)
	tb.press("Enter on Mark winner", kb.Enter)
	tb.waitJS("the winner marked", fmt.Sprintf(`document.querySelector(%q)?.dataset.winner === "true"`, branchGroupSel(best)))
	tb.waitJS("the view not busy", `[...document.querySelectorAll('[data-testid="mark-winner"]')].every((b) => b.getAttribute("aria-disabled") !== "true")`)
	if !tb.focused(inBranch(best, "Unmark winner")) {
		tb.fail("after Mark winner focus is on %s, want the same button (Unmark winner)", tb.describeFocus())
	}
	// Telling the parent is part of the action: on unless turned off.
	tb.tabTo("and tell the parent", fmt.Sprintf(`el.closest(%q) && el.matches('input[type="checkbox"][data-testid="tell-parent"]')`, branchGroupSel(best)), 3)
	tb.waitJS("and tell the parent checked", fmt.Sprintf(`document.querySelector(%q).checked`, branchGroupSel(best)+` [data-testid="tell-parent"]`))
	tb.tabTo("Apply to parent", inBranch(best, "Apply to parent"), 3)
	tb.press("Enter on Apply to parent", kb.Enter)
	tb.waitJS("applied", fmt.Sprintf(`document.querySelector(%q)?.dataset.kind === "applied"`, branchGroupSel(best)+` [role="status"][data-testid="branch-apply-outcome"]`))
	if got := readFile(t, repo+"/check.sh"); got != "exit 0\n" {
		t.Errorf("the parent's check.sh after Apply to parent = %q", got)
	}
	tb.waitJS("the view not busy", `[...document.querySelectorAll('[data-testid="apply-branch"]')].every((b) => b.getAttribute("aria-disabled") !== "true")`)
	if !tb.focused(fmt.Sprintf(`el.closest(%q)`, branchGroupSel(best))) {
		tb.fail("after Apply to parent focus is on %s, want it still in %s's group", tb.describeFocus(), best)
	}
	var xID string
	tb.eval(fmt.Sprintf(`document.querySelector(%q).dataset.explorationId`, explorationSel), &xID)
	if b := h.exploration(ws, parent.ID, xID).branch(t, best); !b.Winner || b.AppliedAt == nil || b.ToldAt == nil {
		t.Errorf("%s after the keyboard's Mark winner and Apply to parent with and tell the parent: winner %v, applied %v, told %v", best, b.Winner, b.AppliedAt, b.ToldAt)
	}
	tb.noError()
}

// checkEightFit: at 1280 px the page does not overflow sideways, each
// group's buttons are inside the viewport, and scrolling brings every
// group wholly into the exploration's view.
func checkEightFit(tb *tab, groupsSel string) {
	tb.t.Helper()
	var fit struct {
		ScrollWidth, ClientWidth int
		ViewScroll, ViewClient   int
		Columns                  int
		Outside                  []string
		Unreached                []string
	}
	tb.evalAsync(fmt.Sprintf(`(async () => {
	  const de = document.documentElement, view = document.querySelector(%q);
	  const gs = [...document.querySelectorAll(%q)];
	  const outside = [], unreached = [];
	  for (const g of gs) {
	    for (const b of g.querySelectorAll("button, input, a")) {
	      const r = b.getBoundingClientRect();
	      if (r.left < 0 || r.right > de.clientWidth) outside.push(g.dataset.branchName + ": " + b.textContent.trim());
	    }
	  }
	  for (const g of gs) {
	    g.scrollIntoView({ block: "nearest" });
	    await new Promise((r) => requestAnimationFrame(r));
	    const r = g.getBoundingClientRect(), v = view.getBoundingClientRect();
	    if (r.top < v.top - 1 || r.bottom > Math.min(v.bottom, innerHeight) + 1 || r.width === 0) unreached.push(g.dataset.branchName);
	  }
	  view.scrollTop = 0;
	  return { scrollWidth: de.scrollWidth, clientWidth: de.clientWidth, viewScroll: view.scrollWidth, viewClient: view.clientWidth,
	    columns: getComputedStyle(document.querySelector('[data-testid="exploration-branches"]')).gridTemplateColumns.split(" ").length,
	    outside, unreached };
	})()`, explorationSel, groupsSel), &fit)
	if fit.ScrollWidth > fit.ClientWidth || fit.ViewScroll > fit.ViewClient || len(fit.Outside) > 0 || len(fit.Unreached) > 0 || fit.Columns < 4 {
		tb.fail("8 branches at 1280 px: %+v", fit)
	}
}
