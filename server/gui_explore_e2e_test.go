package server_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"tuttid/codex/codextest"
)

// Issue 32's GUI (Explore) in Chromium, on the real Codex, real git and the
// test model server, which answers each branch by its model (as in
// TestExploreForksChecksRanksAndBringsTheWinnerBack): `Explore from here`
// opens the Explore dialog; branch a on mock-fail writes a check that
// exits 3, branch b on mock-pass one that exits 0; the exploration view
// shows both checks as they end (live, by events), b ranked first;
// Review shows Codex's review of b in b's group when it ends;
// Compare puts the two side by side; `Mark winner` and `Apply to parent`
// with `and tell the parent` bring b's check.sh into the parent's folder
// and its summary into the parent's thread; `Archive the others` archives
// a.

const explorationSel = `section[aria-label="Exploration"]`

func exploreFromHereSel(turnID string) string {
	return fmt.Sprintf(`[data-testid="explore-from-here"][data-turn-id=%q]`, turnID)
}

// waitJSFor is waitJS with its own bound: the branches run their turns and
// checks before the view can show their results.
func (tb *tab) waitJSFor(what, expr string, d time.Duration) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, d+time.Second)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr,
		chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(d)))
	if err != nil {
		tb.fail("waiting for %s (%s): %v", what, expr, err)
	}
}

// branchGroupSel is the exploration view's group of branch name.
func branchGroupSel(name string) string {
	return fmt.Sprintf(`%s [role="group"][aria-label=%q]`, explorationSel, name)
}

// clickInBranch clicks the enabled button (neither disabled nor
// aria-disabled) named name in branch's group.
func (tb *tab) clickInBranch(branch, name string) {
	tb.t.Helper()
	tb.waitJS("to click "+name+" on "+branch, fmt.Sprintf(`(() => {
	  const g = document.querySelector(%q);
	  const b = g && [...g.querySelectorAll("button")].find((b) => b.textContent.trim() === %q);
	  if (!b || b.disabled || b.getAttribute("aria-disabled") === "true") return false;
	  b.click();
	  return true;
	})()`, branchGroupSel(branch), name))
}

// checkInBranch checks the checkbox labelled label in branch's group.
func (tb *tab) checkInBranch(branch, label string) {
	tb.t.Helper()
	tb.waitJS("to check "+label+" on "+branch, fmt.Sprintf(`(() => {
	  const g = document.querySelector(%q);
	  const l = g && [...g.querySelectorAll("label")].find((l) => l.textContent.trim() === %q);
	  const box = l && l.querySelector('input[type="checkbox"]');
	  if (!box || box.disabled) return false;
	  if (!box.checked) box.click();
	  return box.checked;
	})()`, branchGroupSel(branch), label))
}

// branchText is the text of what (a data-testid) in branch's group.
func (tb *tab) branchText(branch, what string) string {
	tb.t.Helper()
	var s string
	tb.eval(fmt.Sprintf(`document.querySelector(%q)?.textContent ?? ""`, branchGroupSel(branch)+fmt.Sprintf(` [data-testid=%q]`, what)), &s)
	return s
}

func TestGUIExplore(t *testing.T) {
	h := startServer(t, harnessOpts{})
	browser := startBrowser(t)
	base := guiServer(t, h)
	repo := plainRepo(t)
	ws := h.createWorkspaceAt("gui-explore", repo, "")
	parent := h.startSession(ws, "parent")
	turn := h.send(ws, parent.ID, "hello")
	h.model.SetModelReply("mock-pass", orReview(codextest.CommandThen("printf 'exit 0\\n' > check.sh", "wrote a passing check")))
	h.model.SetModelReply("mock-fail", codextest.CommandThen("printf 'echo broken; exit 3\\n' > check.sh", "wrote a failing check"))

	tb := openTab(t, browser, base)
	tb.open(ws, parent.ID)
	tb.run("the turn", chromedp.WaitVisible(chromedp.CSS(turnSel(turn)+`[data-status="COMPLETED"]`)))

	// The dialog: two branches to start with, a and b.
	tb.click("Explore from here", exploreFromHereSel(turn))
	tb.waitJS("the Explore dialog", fmt.Sprintf(`document.querySelector('[role="dialog"][data-testid="explore-dialog"]')?.dataset.turnId === %q`, turn))
	if names := tb.axNames("dialog"); !slices.Contains(names, "Explore") {
		tb.fail("dialogs = %q, want one named Explore", names)
	}
	if groups := tb.axNames("group"); !slices.Contains(groups, "Branch 1") || !slices.Contains(groups, "Branch 2") || slices.Contains(groups, "Branch 3") {
		tb.fail("the dialog's groups = %q, want Branch 1 and Branch 2", groups)
	}
	var names []string
	tb.eval(`[...document.querySelectorAll('[role="dialog"] input[aria-label="Name"]')].map((i) => i.value)`, &names)
	if !slices.Equal(names, []string{"a", "b"}) {
		tb.fail("branch names = %q, want a and b", names)
	}
	tb.setField(`[data-testid="explore-0-model"]`, "mock-fail")
	tb.setField(`[data-testid="explore-1-model"]`, "mock-pass")
	tb.run("type the shared prompt", chromedp.SendKeys(chromedp.CSS(`[role="dialog"] textarea[aria-label="Prompt"]`), "write check.sh"))
	tb.setField(`[role="dialog"] input[aria-label="Check command"]`, "sh check.sh")
	tb.screenshot("explore-dialog.png")
	tb.clickButton("Start")

	// The view, then both checks as they end: b (passing) ranked first.
	tb.waitJS("the exploration view", fmt.Sprintf(`document.querySelectorAll(%q).length === 2`, explorationSel+` [role="group"][data-branch-name]`))
	tb.waitJS("the dialog closed", `!document.querySelector('[data-testid="explore-dialog"]')`)
	if regions := tb.axNames("region"); !slices.Contains(regions, "Exploration") {
		tb.fail("regions = %q, want Exploration", regions)
	}
	tb.waitJSFor("both branches' checks", fmt.Sprintf(`(() => {
	  const c = (n) => document.querySelector(%q + ' [role="group"][data-branch-name="' + n + '"] [data-testid="branch-check"] summary')?.textContent ?? "";
	  return c("a").includes("Check failed") && c("b").includes("Check passed");
	})()`, explorationSel), 3*time.Minute)
	tb.waitJS("the ranking", fmt.Sprintf(`(() => {
	  const gs = [...document.querySelectorAll(%q)].map((g) => g.dataset.branchName);
	  return gs.join() === "b,a";
	})()`, explorationSel+` [role="group"][data-branch-name]`))
	if groups := tb.axNames("group"); !slices.Contains(groups, "a") || !slices.Contains(groups, "b") {
		tb.fail("groups = %q, want one named a and one named b", groups)
	}
	if got := tb.branchText("b", "branch-rank"); got != "rank 1" {
		t.Errorf("b's rank reads %q, want rank 1", got)
	}
	var output string
	tb.eval(fmt.Sprintf(`document.querySelector(%q)?.textContent ?? ""`, branchGroupSel("a")+` [data-testid="branch-check"] details pre`), &output)
	if !slices.Contains([]string{"broken\n", "broken"}, output) {
		t.Errorf("a's check output behind its disclosure = %q, want broken", output)
	}
	if got := tb.branchText("b", "branch-change"); got != "1 file, +1 −0" {
		t.Errorf("b's change reads %q, want 1 file, +1 −0", got)
	}
	// Eight branches fit at 1280 px: four to a row.
	var cols int
	tb.eval(`getComputedStyle(document.querySelector('[data-testid="exploration-branches"]')).gridTemplateColumns.split(" ").length`, &cols)
	if cols < 4 {
		t.Errorf("the branches' grid has %d columns at 1280 px, want 4", cols)
	}
	tb.screenshot("exploration.png")

	// Codex's review of b, shown in b's group when it ends.
	tb.clickInBranch("b", "Review")
	tb.waitJSFor("b's review", fmt.Sprintf(`document.querySelector(%q)?.dataset.reviewState === "DONE"`, branchGroupSel("b")+` [data-testid="branch-review"]`), 2*time.Minute)
	var review string
	tb.eval(fmt.Sprintf(`document.querySelector(%q)?.textContent ?? ""`, branchGroupSel("b")+` [data-testid="branch-review"] pre`), &review)
	if !strings.Contains(review, reviewFindings) {
		t.Errorf("b's review reads %q, want the reviewer's text", review)
	}

	var xID string
	tb.eval(fmt.Sprintf(`document.querySelector(%q).dataset.explorationId`, explorationSel), &xID)
	x := h.exploration(ws, parent.ID, xID)
	aSession, bSession := x.branch(t, "a").Session.ID, x.branch(t, "b").Session.ID

	// Compare the top two: the Compare view of their sessions; back to the
	// exploration.
	tb.click("Compare", explorationSel+` [data-testid="compare-branches"]`)
	tb.waitJS("the comparison", fmt.Sprintf(`!!document.querySelector('[data-testid="comparison"][data-a=%q][data-b=%q]')`, bSession, aSession))
	tb.eval(`(history.back(), true)`, new(bool))
	tb.waitJS("the exploration again", fmt.Sprintf(`document.querySelectorAll(%q).length === 2`, explorationSel+` [role="group"][data-branch-name]`))

	// Archive the others waits for a winner.
	tb.waitJS("Archive the others disabled", `[...document.querySelectorAll("button")].find((b) => b.textContent.trim() === "Archive the others")?.disabled === true`)

	// The winner back, code and conversation.
	tb.clickInBranch("b", "Mark winner")
	tb.waitJS("b the winner", fmt.Sprintf(`document.querySelector(%q)?.dataset.winner === "true"`, branchGroupSel("b")))
	tb.checkInBranch("b", "and tell the parent")
	tb.clickInBranch("b", "Apply to parent")
	tb.waitJS("b applied", fmt.Sprintf(`document.querySelector(%q)?.dataset.kind === "applied"`, branchGroupSel("b")+` [role="status"][data-testid="branch-apply-outcome"]`))
	if got := readFile(t, filepath.Join(repo, "check.sh")); got != "exit 0\n" {
		t.Errorf("the parent's check.sh after Apply to parent = %q, want b's", got)
	}
	if b := h.exploration(ws, parent.ID, xID).branch(t, "b"); b.ToldAt == nil || b.AppliedAt == nil {
		t.Errorf("b after Apply to parent with and tell the parent: applied %v, told %v", b.AppliedAt, b.ToldAt)
	}

	// Archive the others: a.
	tb.clickButton("Archive the others")
	tb.waitJS("a archived", fmt.Sprintf(`(() => { const g = document.querySelector(%q);
	  return g?.dataset.state === "ARCHIVED" && g.querySelector('[data-testid="branch-state"]').textContent === "Archived"; })()`, branchGroupSel("a")))
	if a := h.exploration(ws, parent.ID, xID).branch(t, "a"); a.State != "ARCHIVED" {
		t.Errorf("a after Archive the others: %s", a.State)
	}
	tb.screenshot("exploration-done.png")

	// From the branch's session back to the exploration; the parent lists it.
	tb.click("Open session on b", branchGroupSel("b")+` [data-testid="open-branch"]`)
	tb.run("b's session", chromedp.WaitVisible(chromedp.CSS(activeSel(bSession))))
	tb.click("Open the exploration", `[data-testid="open-parent-exploration"]`)
	tb.waitJS("the exploration from the branch", fmt.Sprintf(`document.querySelector(%q)?.dataset.explorationId === %q`, explorationSel, xID))
	tb.click("Close exploration", `[data-testid="close-exploration"]`)
	tb.waitJS("the parent's exploration link", fmt.Sprintf(`!!document.querySelector('[data-testid="exploration-link"][data-exploration-id=%q]')`, xID))
	tb.noError()
}
