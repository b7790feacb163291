package server_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"tuttid/codex/codextest"
)

// heldFirstRequests scripts the model replies of an exploration whose
// branches must be seen running at once: a branch's first request (a
// fresh turn) is held by the model server until release is called (or a
// minute passes), then answered with cmd; the request after the command
// with text. held counts the first requests being held.
type heldFirstRequests struct {
	gate    chan struct{}
	once    sync.Once
	held    atomic.Int32
	release func()
}

func newHeldFirstRequests(t *testing.T) *heldFirstRequests {
	g := &heldFirstRequests{gate: make(chan struct{})}
	g.release = func() { g.once.Do(func() { close(g.gate) }) }
	t.Cleanup(g.release)
	return g
}

func (g *heldFirstRequests) reply(cmd, text string) func(codextest.Request) codextest.Reply {
	return func(r codextest.Request) codextest.Reply {
		if r.AfterToolCall() {
			return codextest.Reply{Text: text}
		}
		g.held.Add(1)
		select {
		case <-g.gate:
		case <-time.After(time.Minute):
		}
		return codextest.Reply{FunctionCall: &codextest.FunctionCall{Cmd: cmd}}
	}
}

// TestGUIExploreFourWays is issue 32's "Done when", all from the GUI in
// Chromium on the real Codex, real git and the test model server: a
// session on a git project with three completed turns; the person picks
// turn 3, `Explore from here`, four branches with `Add branch` (two models
// by two efforts: pass-low, pass-high on mock-pass, fail-low, fail-high on
// mock-fail) and the check command; the four run at once (the model
// server holds all four first requests together while the view shows four
// groups Running, and the store's turns overlap: each started before any
// completed); both pass branches show Check passed, both fail branches
// Check failed, the pass ones ranked first; Compare of the top two;
// `Apply to parent` with `and tell the parent` on the winner; `Archive the
// others` (three archived, their worktrees gone from `git worktree
// list`); then the parent's next turn, sent from its composer, builds on
// the winner: its model request carries the branch summary and its
// command reads the winner's check.sh in the parent's checkout.
func TestGUIExploreFourWays(t *testing.T) {
	h := startServer(t, harnessOpts{})
	browser := startBrowser(t)
	base := guiServer(t, h)
	repo := plainRepo(t)
	ws := h.createWorkspaceAt("gui-explore-four", repo, "")
	parent := h.startSession(ws, "parent")
	h.send(ws, parent.ID, "first turn")
	h.send(ws, parent.ID, "second turn")
	turn3 := h.send(ws, parent.ID, "third turn")
	held := newHeldFirstRequests(t)
	h.model.SetModelReply("mock-pass", held.reply("printf 'exit 0\\n' > check.sh", "wrote a passing check"))
	h.model.SetModelReply("mock-fail", held.reply("printf 'echo broken; exit 3\\n' > check.sh", "wrote a failing check"))

	tb := openTab(t, browser, base)
	tb.open(ws, parent.ID)
	tb.run("turn 3", chromedp.WaitVisible(chromedp.CSS(turnSel(turn3)+`[data-status="COMPLETED"]`)))

	// The dialog from turn 3: four branches, two models by two efforts.
	tb.click("Explore from here on turn 3", exploreFromHereSel(turn3))
	tb.waitJS("the Explore dialog from turn 3", fmt.Sprintf(`(() => {
	  const d = document.querySelector('[role="dialog"][data-testid="explore-dialog"]');
	  return d?.dataset.turnId === %q && d.querySelector('[data-testid="explore-dialog-from"]').textContent.includes("third turn");
	})()`, turn3))
	tb.clickButton("Add branch")
	tb.clickButton("Add branch")
	if groups := tb.axNames("group"); !slices.Contains(groups, "Branch 4") || slices.Contains(groups, "Branch 5") {
		tb.fail("the dialog's groups after Add branch twice = %q, want Branch 1 to Branch 4", groups)
	}
	branches := []struct{ name, model, effort string }{
		{"pass-low", "mock-pass", "low"}, {"pass-high", "mock-pass", "high"},
		{"fail-low", "mock-fail", "low"}, {"fail-high", "mock-fail", "high"},
	}
	for i, b := range branches {
		tb.setField(fmt.Sprintf(`[data-testid="explore-%d-name"]`, i), b.name)
		tb.setField(fmt.Sprintf(`[data-testid="explore-%d-model"]`, i), b.model)
		tb.setField(fmt.Sprintf(`[data-testid="explore-%d-effort"]`, i), b.effort)
	}
	tb.run("type the shared prompt", chromedp.SendKeys(chromedp.CSS(`[role="dialog"] textarea[aria-label="Prompt"]`), "write check.sh"))
	tb.setField(`[role="dialog"] input[aria-label="Check command"]`, "sh check.sh")
	tb.clickButton("Start")

	// Watching the four run at once: the model server holds the four
	// first requests together, and meanwhile the view shows four groups,
	// each Running.
	groupsSel := explorationSel + ` [role="group"][data-branch-name]`
	tb.waitJS("four groups running", fmt.Sprintf(`(() => {
	  const gs = [...document.querySelectorAll(%q)];
	  return gs.length === 4 && gs.every((g) => g.dataset.state === "RUNNING" && g.querySelector('[data-testid="branch-state"]').textContent === "Running");
	})()`, groupsSel))
	h.eventually("the four first requests held at once", time.Minute, func() bool { return held.held.Load() == 4 })
	if groups := tb.axNames("group"); !containsAll(groups, "pass-low", "pass-high", "fail-low", "fail-high") {
		tb.fail("groups while running = %q, want the four branches", groups)
	}
	tb.screenshot("explore-four-running.png")
	held.release()

	// Which pass: both pass branches passed, both fail branches failed,
	// the pass ones ranked first.
	tb.waitJSFor("the four checks", fmt.Sprintf(`(() => {
	  const c = (n) => document.querySelector(%q + ' [role="group"][data-branch-name="' + n + '"] [data-testid="branch-check"] summary')?.textContent ?? "";
	  return c("pass-low").includes("Check passed") && c("pass-high").includes("Check passed") &&
	    c("fail-low").includes("Check failed") && c("fail-high").includes("Check failed");
	})()`, explorationSel), 3*time.Minute)
	var order []string
	tb.eval(fmt.Sprintf(`[...document.querySelectorAll(%q)].map((g) => g.dataset.branchName)`, groupsSel), &order)
	if len(order) != 4 || !strings.HasPrefix(order[0], "pass-") || !strings.HasPrefix(order[1], "pass-") {
		tb.fail("the view's order = %q, want the two pass branches first", order)
	}
	for i, name := range order[:2] {
		if got, want := tb.branchText(name, "branch-rank"), fmt.Sprintf("rank %d", i+1); got != want {
			t.Errorf("%s's rank reads %q, want %q", name, got, want)
		}
	}
	tb.screenshot("explore-four-checked.png")

	var xID string
	tb.eval(fmt.Sprintf(`document.querySelector(%q).dataset.explorationId`, explorationSel), &xID)
	x := h.exploration(ws, parent.ID, xID)
	if x.LastTurnID != turn3 || x.CheckCommand != "sh check.sh" {
		t.Errorf("the exploration: from turn %s with check %q, want turn 3 (%s) and sh check.sh", x.LastTurnID, x.CheckCommand, turn3)
	}
	if x.Ranking[0].Name != order[0] || x.Ranking[1].Name != order[1] {
		t.Errorf("the server's ranking %+v, the view's %q", x.Ranking, order)
	}
	// Each branch ran on its model and effort, as the dialog set them;
	// their first turns overlapped in time.
	type span struct{ started, completed time.Time }
	var spans []span
	for _, b := range branches {
		v := x.branch(t, b.name)
		if v.Session == nil || v.Check == nil {
			t.Fatalf("branch %s: %+v", b.name, v)
		}
		reqs := h.model.RequestsFor(v.Session.ProviderSessionID)
		var body struct {
			Model     string
			Reasoning *struct{ Effort string }
		}
		if len(reqs) > 0 {
			_ = json.Unmarshal(reqs[len(reqs)-1].Body, &body)
		}
		if body.Model != b.model || body.Reasoning == nil || body.Reasoning.Effort != b.effort {
			t.Errorf("branch %s's model request: model %q reasoning %+v, want %s and %s", b.name, body.Model, body.Reasoning, b.model, b.effort)
		}
		spans = append(spans, turnSpan(t, h, ws, v.Session.ID, v.Check.TurnID))
	}
	var lastStart, firstEnd time.Time
	for _, s := range spans {
		if s.started.After(lastStart) {
			lastStart = s.started
		}
		if firstEnd.IsZero() || s.completed.Before(firstEnd) {
			firstEnd = s.completed
		}
	}
	if !lastStart.Before(firstEnd) {
		t.Errorf("the four first turns did not overlap: the last started at %s, the first completed at %s", lastStart, firstEnd)
	}

	// Compare the top two.
	first, second := x.branch(t, order[0]).Session.ID, x.branch(t, order[1]).Session.ID
	tb.click("Compare", explorationSel+` [data-testid="compare-branches"]`)
	tb.waitJS("the comparison of the top two", fmt.Sprintf(`!!document.querySelector('[data-testid="comparison"][data-a=%q][data-b=%q]')`, first, second))
	tb.eval(`(history.back(), true)`, new(bool))
	tb.waitJS("the exploration again", fmt.Sprintf(`document.querySelectorAll(%q).length === 4`, groupsSel))

	// The winner to the parent, code and conversation.
	winner := order[0]
	tb.clickInBranch(winner, "Mark winner")
	tb.waitJS("the winner marked", fmt.Sprintf(`document.querySelector(%q)?.dataset.winner === "true"`, branchGroupSel(winner)))
	tb.checkInBranch(winner, "and tell the parent")
	tb.clickInBranch(winner, "Apply to parent")
	tb.waitJS("the winner applied", fmt.Sprintf(`document.querySelector(%q)?.dataset.kind === "applied"`, branchGroupSel(winner)+` [role="status"][data-testid="branch-apply-outcome"]`))
	if got := readFile(t, filepath.Join(repo, "check.sh")); got != "exit 0\n" {
		t.Errorf("the parent's check.sh after Apply to parent = %q, want the winner's", got)
	}

	// Archive the others: three archived, their worktrees gone.
	tb.clickButton("Archive the others")
	tb.waitJS("the three others archived", fmt.Sprintf(`(() => {
	  const gs = [...document.querySelectorAll(%q)];
	  return gs.filter((g) => g.dataset.state === "ARCHIVED").length === 3 && gs.find((g) => g.dataset.branchName === %q)?.dataset.state === "IDLE";
	})()`, groupsSel, winner))
	x = h.exploration(ws, parent.ID, xID)
	worktrees := gitWorktrees(t, repo)
	for _, b := range x.Branches {
		listed := slices.ContainsFunc(worktrees, func(p string) bool { return strings.Contains(p, b.Session.ID) })
		_, err := os.Stat(filepath.Join(h.worktreesDir(ws), b.Session.ID))
		if b.Name == winner {
			if b.State != "IDLE" || !listed || err != nil {
				t.Errorf("the winner %s: %s, listed by git worktree list %v, its worktree %v", b.Name, b.State, listed, err)
			}
			continue
		}
		if b.State != "ARCHIVED" || listed || !os.IsNotExist(err) {
			t.Errorf("%s after Archive the others: %s, listed by git worktree list %v (%q), its folder %v", b.Name, b.State, listed, worktrees, err)
		}
	}
	if len(worktrees) != 2 {
		t.Errorf("git worktree list = %q, want the repository and the winner's", worktrees)
	}
	tb.screenshot("explore-four-done.png")

	// The parent's next turn, from its composer, builds on the winner: it
	// reads the winner's check.sh in the parent's checkout, and its model
	// request carries the branch's summary.
	h.model.SetModelReply("mock-model", codextest.CommandThen("cat check.sh", "the winner's check is here"))
	tb.click("Close exploration", `[data-testid="close-exploration"]`)
	tb.run("send from the parent's composer",
		chromedp.WaitVisible(chromedp.CSS(activeSel(parent.ID)+` [data-testid="composer-input"]`)),
		chromedp.SendKeys(chromedp.CSS(`[data-testid="composer-input"]`), "what next?"),
	)
	tb.click("Send", `[data-testid="send"]`)
	tb.waitJSFor("the parent's next turn", fmt.Sprintf(`[...document.querySelectorAll('%s [data-testid="turn"][data-status="COMPLETED"] [data-testid="message"][data-role="assistant"]')]
	  .some((m) => m.textContent.includes("the winner's check is here"))`, activeSel(parent.ID)), time.Minute)
	reqs := h.model.RequestsFor(parent.ProviderSessionID)
	var next, after *codextest.Request
	for i := range reqs {
		if slices.Contains(reqs[i].UserTexts(), "what next?") {
			if reqs[i].AfterToolCall() {
				after = &reqs[i]
			} else if next == nil {
				next = &reqs[i]
			}
		}
	}
	if next == nil || after == nil {
		t.Fatalf("the parent's model requests for its next turn: first %v, after the command %v", next != nil, after != nil)
	}
	if n := countContaining(next.UserTexts(), `<tuttid_branch_summary exploration="`+xID+`" branch="`+winner+`">`); n != 1 {
		t.Errorf("the parent's next model request carries the winner's summary %d times, want once: %q", n, next.UserTexts())
	}
	if n := countContaining(next.UserTexts(), "<tuttid_branch_summary"); n != 1 {
		t.Errorf("the parent's next model request carries %d branch summaries, want one", n)
	}
	if outs := after.FunctionCallOutputs(); !slices.ContainsFunc(outs, func(o codextest.FunctionCallOutput) bool { return strings.Contains(o.Output, "exit 0") }) {
		t.Errorf("the parent's command read %+v, want the winner's check.sh (exit 0)", outs)
	}
	tb.noError()
}

func containsAll(have []string, want ...string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// turnSpan is when a session's turn started and completed (the store's).
func turnSpan(t *testing.T, h *harness, ws, sessionID, turnID string) (s struct{ started, completed time.Time }) {
	t.Helper()
	var out struct {
		Session struct {
			Turns []struct {
				ID          string
				StartedAt   time.Time
				CompletedAt *time.Time
			}
		}
	}
	h.must(`query($ws: ID!, $id: ID!) { session(workspaceId: $ws, id: $id) { turns { id startedAt completedAt } } }`,
		map[string]any{"ws": ws, "id": sessionID}, &out)
	for _, tr := range out.Session.Turns {
		if tr.ID == turnID && tr.CompletedAt != nil {
			s.started, s.completed = tr.StartedAt, *tr.CompletedAt
			return s
		}
	}
	t.Fatalf("session %s has no completed turn %s: %+v", sessionID, turnID, out.Session.Turns)
	return s
}

// gitWorktrees is `git worktree list --porcelain`'s paths in repo.
func gitWorktrees(t *testing.T, repo string) []string {
	t.Helper()
	out, err := gitOut(repo, "worktree", "list", "--porcelain")
	if err != nil {
		t.Fatalf("git worktree list: %v %s", err, out)
	}
	var paths []string
	for line := range strings.Lines(string(out)) {
		if p, ok := strings.CutPrefix(strings.TrimSpace(line), "worktree "); ok {
			paths = append(paths, p)
		}
	}
	return paths
}

// TestGUIWorkspaceCheck: the New workspace form takes the check Explore
// runs (issue 32): the workspace is made with its checkCommand and
// checkTimeoutSeconds; Workspace settings shows them, changes them and
// sets the worktree setup (updateWorkspace); the Explore dialog on one of
// its sessions starts from the command as changed and says its bound.
func TestGUIWorkspaceCheck(t *testing.T) {
	h := startServer(t, harnessOpts{})
	browser := startBrowser(t)
	repo := plainRepo(t)
	tb := openTab(t, browser, guiServer(t, h))
	tb.run("load the GUI", chromedp.Navigate(tb.url+"/app/"), chromedp.WaitVisible(chromedp.CSS(`body[data-ready="true"]`)))
	var open bool
	tb.eval(`document.querySelector('[data-testid="workspace-form"]').checkVisibility()`, &open)
	if !open {
		tb.click("New workspace", `[data-testid="new-workspace"]`)
	}
	tb.run("fill the workspace form",
		chromedp.SendKeys(chromedp.CSS(`[data-testid="workspace-name"]`), "Checked"),
		chromedp.SendKeys(chromedp.CSS(`[data-testid="workspace-root"]`), repo),
		chromedp.SendKeys(chromedp.CSS(`[data-testid="workspace-check"]`), "sh check.sh"),
		chromedp.SendKeys(chromedp.CSS(`[data-testid="workspace-check-timeout"]`), "120"),
	)
	tb.screenshot("workspace-form.png")
	tb.clickButton("Create")
	tb.waitJS("the new workspace selected", `(() => { const s = document.querySelector('[data-testid="workspace-select"]');
	  return s.selectedOptions.length === 1 && s.selectedOptions[0].textContent === "Checked"; })()`)
	var ws string
	tb.eval(`document.querySelector('[data-testid="workspace-select"]').value`, &ws)
	var stored struct {
		Workspace *struct {
			RootPath            string
			CheckCommand        *string
			CheckTimeoutSeconds int
		}
	}
	h.must(`query($id: ID!) { workspace(id: $id) { rootPath checkCommand checkTimeoutSeconds } }`, map[string]any{"id": ws}, &stored)
	if w := stored.Workspace; w == nil || w.RootPath != repo || w.CheckCommand == nil || *w.CheckCommand != "sh check.sh" || w.CheckTimeoutSeconds != 120 {
		t.Fatalf("the workspace made by the form: %+v", w)
	}

	tb.click("Workspace settings", `[data-testid="workspace-settings"]`)
	tb.waitJS("the workspace's settings read", `(() => { const c = document.querySelector('[data-testid="settings-check"]');
	  return !c.disabled && c.value === "sh check.sh" && document.querySelector('[data-testid="settings-check-timeout"]').value === "120"; })()`)
	tb.setField(`[data-testid="settings-check"]`, "sh check2.sh")
	tb.setField(`[data-testid="settings-check-timeout"]`, "90")
	tb.setField(`[data-testid="settings-setup"]`, "true")
	// The sandbox choice, said in words both ways.
	var help string
	tb.eval(`document.querySelector('[data-testid="settings-unsandboxed-help"]').textContent`, &help)
	if !strings.Contains(help, "no more power than the branch's agent") {
		t.Errorf("the sandboxed choice says %q", help)
	}
	tb.click("Run the check and setup as me, unsandboxed", `[data-testid="settings-unsandboxed"]`)
	tb.waitJS("the unsandboxed choice explained", `document.querySelector('[data-testid="settings-unsandboxed-help"]').textContent.includes("use the network")`)
	tb.screenshot("workspace-settings.png")
	tb.clickButton("Save")
	tb.waitJS("the settings form closed", `!document.querySelector('[data-testid="workspace-settings"]').closest("details").open`)
	var updated struct {
		Workspace *struct {
			CheckCommand, WorktreeSetup *string
			CheckTimeoutSeconds         int
			CommandSandbox              string
		}
	}
	h.must(`query($id: ID!) { workspace(id: $id) { checkCommand checkTimeoutSeconds worktreeSetup commandSandbox } }`, map[string]any{"id": ws}, &updated)
	if w := updated.Workspace; w == nil || w.CheckCommand == nil || *w.CheckCommand != "sh check2.sh" || w.CheckTimeoutSeconds != 90 ||
		w.WorktreeSetup == nil || *w.WorktreeSetup != "true" || w.CommandSandbox != "NONE" {
		t.Fatalf("the workspace after Workspace settings: %+v", w)
	}

	parent := h.startSession(ws, "parent")
	turn := h.send(ws, parent.ID, "hello")
	tb.open(ws, parent.ID)
	tb.click("Explore from here", exploreFromHereSel(turn))
	tb.waitJS("the Explore dialog", `!!document.querySelector('[role="dialog"][data-testid="explore-dialog"]')`)
	var dialog struct{ Check, Note string }
	tb.eval(`({ check: document.querySelector('[role="dialog"] input[aria-label="Check command"]').value,
	  note: document.getElementById("explore-check-note").textContent })`, &dialog)
	if dialog.Check != "sh check2.sh" || !strings.Contains(dialog.Note, "up to 90 s") {
		t.Errorf("the Explore dialog starts from check %q, note %q; want sh check2.sh, up to 90 s", dialog.Check, dialog.Note)
	}
	tb.noError()
}
