package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"tuttid/codex/codextest"
)

// The GUI tests drive the web app (package web) in a real headless Chromium
// against a whole tuttid with the real codex app-server: the design's
// frontend tests, live streaming, and the error banner. One browser serves
// every subtest; each subtest gets its own tab and workspace.

// chromiumEnv overrides the browser binary.
const chromiumEnv = "CHROMIUM_BIN"

// guiWait bounds every wait on the page.
const guiWait = 20 * time.Second

// slowPrompt makes the model answer with a first delta, then hold the turn
// open (until interrupted) so that it stays IN_PROGRESS.
const slowPrompt = "please take your time"

// approvalPrompt makes the model ask to run a command outside the sandbox.
const approvalPrompt = "run it outside"

const slowFirstChunk = "Streaming the first words"

func chromiumPath(t *testing.T) string {
	t.Helper()
	p := os.Getenv(chromiumEnv)
	if p == "" {
		p = "/usr/bin/chromium"
	}
	if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
		return p
	}
	msg := fmt.Sprintf("chromium not found at %s; install it with `apt-get install -y chromium` or set %s", p, chromiumEnv)
	if os.Getenv("CI") != "" || os.Getenv(chromiumEnv) != "" {
		t.Fatal(msg)
	}
	t.Skip("skipping: " + msg)
	return ""
}

// startBrowser launches one headless Chromium for the test and its subtests.
func startBrowser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.Headless,
		chromedp.NoSandbox, // CI runs as root
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 860),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
	})
	// The first Run starts the browser; its context must live as long as the
	// browser, so it has no timeout of its own.
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return bctx
}

// guiServer is the base URL of the GUI (/app/) and the API (/query): the
// harness's server itself.
func guiServer(t *testing.T, h *harness) string {
	t.Helper()
	return h.url
}

// tab is one browser tab on the GUI, bound to a subtest.
type tab struct {
	t   *testing.T
	ctx context.Context
	url string

	mu   sync.Mutex
	done bool
	logs []string
}

func openTab(t *testing.T, browser context.Context, baseURL string) *tab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser)
	tb := &tab{t: t, ctx: ctx, url: baseURL}
	t.Cleanup(func() {
		tb.mu.Lock()
		tb.done = true
		tb.mu.Unlock()
		cancel()
	})
	// The page's console and uncaught exceptions go to the test log.
	err := chromedp.Listen(ctx, func(ev any) {
		var line string
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			var parts []string
			for _, a := range e.Args {
				if a.Value != nil {
					parts = append(parts, string(a.Value))
				} else {
					parts = append(parts, a.Description)
				}
			}
			line = fmt.Sprintf("console.%s: %s", e.Type, strings.Join(parts, " "))
		case *runtime.EventExceptionThrown:
			line = "exception: " + e.ExceptionDetails.Text
			if ex := e.ExceptionDetails.Exception; ex != nil {
				line += " " + ex.Description
			}
		default:
			return
		}
		tb.mu.Lock()
		defer tb.mu.Unlock()
		if !tb.done {
			tb.logs = append(tb.logs, line)
		}
	})
	if err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	// Sign the browser in as a person does: the startup URL with ?token=
	// sets the cookie (TestGUI's TokenCookieFlow checks that flow).
	if tok := tokenFor(baseURL); tok != "" {
		tb.run("sign in with the token", chromedp.Navigate(baseURL+"/app/?token="+tok))
	}
	return tb
}

// run runs browser actions with a bound on their time.
func (tb *tab) run(what string, actions ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, guiWait)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		tb.fail("%s: %v", what, err)
	}
}

// fail ends the test with what the page showed and logged.
func (tb *tab) fail(format string, args ...any) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 3*time.Second)
	defer cancel()
	text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	tb.mu.Lock()
	logs := strings.Join(tb.logs, "\n")
	tb.mu.Unlock()
	tb.t.Fatalf("%s\n--- page text:\n%s\n--- page log:\n%s", fmt.Sprintf(format, args...), text, logs)
}

// open loads the GUI on a workspace and session and waits until the
// session is shown and the activity subscription is live.
func (tb *tab) open(ws, sessionID string) {
	tb.t.Helper()
	tb.run("load the GUI",
		chromedp.Navigate(tb.url+"/app/#w="+ws+"&s="+sessionID),
		chromedp.WaitVisible(chromedp.CSS(activeSel(sessionID))),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="connection"][data-state="live"]`)),
	)
}

// eval evaluates a JavaScript expression into out (decoded as JSON).
func (tb *tab) eval(expr string, out any) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, guiWait)
	defer cancel()
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](expr))
	if err == nil {
		err = json.Unmarshal(raw, out)
	}
	if err != nil {
		tb.fail("evaluate %s: %v", expr, err)
	}
}

// waitJS waits until a JavaScript expression is true, polling in the page.
func (tb *tab) waitJS(what, expr string) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, guiWait+time.Second)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr,
		chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(guiWait)))
	if err != nil {
		tb.fail("waiting for %s (%s): %v", what, expr, err)
	}
}

// click clicks the element sel once it is shown and enabled. Finding and
// clicking happen in one evaluation in the page: the live list re-renders
// on every activity event, and a node found in one step can be gone in
// the next (chromedp.Click failed with "Could not find node" that way).
func (tb *tab) click(what, sel string) {
	tb.t.Helper()
	tb.waitJS("to click "+what, fmt.Sprintf(`(() => {
	  const el = document.querySelector(%q);
	  if (!el || el.disabled || el.getClientRects().length === 0) return false;
	  el.click();
	  return true;
	})()`, sel))
}

func (tb *tab) activeID() string {
	tb.t.Helper()
	var id string
	tb.eval(`document.querySelector('[data-testid="active-session"]').dataset.sessionId || ""`, &id)
	return id
}

// waitActiveOther waits until a session other than id is shown, and
// returns it.
func (tb *tab) waitActiveOther(id string) string {
	tb.t.Helper()
	tb.waitJS("another session to be active", fmt.Sprintf(
		`(() => { const s = document.querySelector('[data-testid="active-session"]');
		  return !s.hidden && !!s.dataset.sessionId && s.dataset.sessionId !== %q; })()`, id))
	return tb.activeID()
}

func (tb *tab) noError() {
	tb.t.Helper()
	var hidden bool
	tb.eval(`document.querySelector('[data-testid="error-banner"]').hidden`, &hidden)
	if !hidden {
		tb.fail("the error banner is shown")
	}
}

func (tb *tab) screenshot(name string) string {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, guiWait)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		tb.fail("screenshot: %v", err)
	}
	dir := os.Getenv("TUTTID_GUI_SCREENSHOTS")
	if dir == "" {
		dir = tb.t.TempDir()
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, png, 0o644); err != nil {
		tb.t.Fatal(err)
	}
	tb.t.Logf("screenshot: %s", p)
	return p
}

func activeSel(id string) string {
	return fmt.Sprintf(`[data-testid="active-session"][data-session-id=%q]`, id)
}

func turnSel(id string) string { return fmt.Sprintf(`[data-testid="turn"][data-turn-id=%q]`, id) }

func forkFromHereSel(turnID string) string {
	return fmt.Sprintf(`[data-testid="fork-from-here"][data-turn-id=%q]`, turnID)
}

func sessionItemSel(id string) string {
	return fmt.Sprintf(`[data-testid="session-item"][data-session-id=%q]`, id)
}

// lineageView is what the GUI tests read back about a session.
type lineageView struct {
	ID           string
	DisplayTitle string
	Parent       *struct{ ID string }
	ForkedFrom   *struct{ LastTurnID *string }
	Children     []struct{ ID string }
	Turns        []struct {
		ID       string
		Status   string
		Messages []struct{ Role, Text string }
	}
}

func (h *harness) lineage(ws, id string) lineageView {
	h.t.Helper()
	var out struct{ Session *lineageView }
	h.must(`query($ws: ID!, $id: ID!) { session(workspaceId: $ws, id: $id) {
	  id displayTitle parent { id } forkedFrom { lastTurnId } children { id }
	  turns { id status messages { role text } } } }`, map[string]any{"ws": ws, "id": id}, &out)
	if out.Session == nil {
		h.t.Fatalf("session %s not found", id)
	}
	return *out.Session
}

func (v lineageView) userTexts() []string {
	var out []string
	for _, t := range v.Turns {
		for _, m := range t.Messages {
			if m.Role == "user" {
				out = append(out, m.Text)
			}
		}
	}
	return out
}

// forGUI returns a copy of the shared harness bound to a subtest.
func (h *harness) forGUI(t *testing.T) *harness {
	c := *h
	c.t = t
	return &c
}

func TestGUI(t *testing.T) {
	shared := startServer(t, harnessOpts{})
	shared.model.SetReply(func(r codextest.Request) codextest.Reply {
		if r.LastUserText() == slowPrompt {
			return codextest.Reply{Chunks: []string{slowFirstChunk, " and the rest"}, Delay: time.Minute}
		}
		if r.LastUserText() == approvalPrompt {
			return escalateOnce("echo gui-approved-31")(r)
		}
		return codextest.DefaultReply(r)
	})
	browser := startBrowser(t)
	base := guiServer(t, shared)

	// setup makes a workspace with a session titled "Build login" that has
	// a completed turn for each text, and a tab showing it.
	setup := func(t *testing.T, texts ...string) (*harness, *tab, string, string, []string) {
		h := shared.forGUI(t)
		ws := h.createWorkspace(t.Name())
		parent := h.startSession(ws, "Build login")
		var turns []string
		for _, text := range texts {
			turns = append(turns, h.send(ws, parent.ID, text))
		}
		tb := openTab(t, browser, base)
		tb.open(ws, parent.ID)
		tb.run("wait for the turns", chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`%s [data-testid="turn"]:nth-of-type(%d)[data-status="COMPLETED"]`,
			activeSel(parent.ID), len(texts)))))
		return h, tb, ws, parent.ID, turns
	}

	// startSlowTurn sends slowPrompt through the composer and waits until
	// the turn runs with its first words shown.
	startSlowTurn := func(t *testing.T, tb *tab, parentID string) {
		tb.run("type and send",
			chromedp.SendKeys(chromedp.CSS(`[data-testid="composer-input"]`), slowPrompt),
			chromedp.Click(chromedp.CSS(`[data-testid="send"]`)),
		)
		tb.run("wait for the running turn", chromedp.WaitVisible(chromedp.CSS(
			activeSel(parentID)+` [data-testid="turn"][data-status="IN_PROGRESS"]`)))
	}

	// interruptAndWait interrupts the running turn from the GUI.
	interruptAndWait := func(t *testing.T, tb *tab, parentID string) {
		tb.click("interrupt", `[data-testid="interrupt"]`)
		tb.run("wait for the interrupted turn", chromedp.WaitVisible(chromedp.CSS(
			activeSel(parentID)+`[data-status="READY"] [data-testid="turn"][data-status="INTERRUPTED"]`)))
	}

	// The way a person signs in: the startup URL with ?token= (or the
	// token typed into the page that asks for it) sets an HttpOnly,
	// SameSite=Strict cookie and leaves an address without the token; the
	// GUI then works, its WebSocket included. Without it the page shows no
	// data. Each case runs in a fresh browser context (no cookie yet).
	t.Run("TokenCookieFlow", func(t *testing.T) {
		h := shared.forGUI(t)
		h.createWorkspace("secret-gui-workspace")
		fresh := func(t *testing.T) *tab {
			ctx, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
			t.Cleanup(cancel)
			// The first Do creates the target: without a timeout of its own,
			// or the target ends with that timeout's context.
			if err := chromedp.Do(ctx); err != nil {
				t.Fatalf("open a tab: %v", err)
			}
			return &tab{t: t, ctx: ctx, url: base}
		}
		signedIn := func(tb *tab) {
			tb.run("the GUI loads live", chromedp.WaitVisible(chromedp.CSS(`body[data-ready="true"]`)),
				chromedp.WaitVisible(chromedp.CSS(`[data-testid="connection"][data-state="live"]`)))
			var state struct {
				Href, Cookie string
				Listed       bool
			}
			tb.eval(`({ href: location.origin + location.pathname + location.search, cookie: document.cookie,
			  listed: [...document.querySelectorAll('[data-testid="workspace-select"] option')].some((o) => o.textContent === "secret-gui-workspace") })`, &state)
			if state.Href != base+"/app/" || state.Cookie != "" || !state.Listed {
				tb.fail("after signing in: %+v (want %s/app/, no script-readable cookie, the workspace listed)", state, base)
			}
			ctx, cancel := context.WithTimeout(tb.ctx, guiWait)
			defer cancel()
			res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{base + "/"}})
			if err != nil {
				tb.fail("cookies: %v", err)
			}
			if len(res.Cookies) != 1 {
				tb.fail("cookies: %+v", res.Cookies)
			}
			c := res.Cookies[0]
			if c.Value != h.token || !c.HTTPOnly || c.SameSite != network.CookieSameSiteStrict || c.Path != "/" {
				tb.fail("cookie %+v", c)
			}
		}
		t.Run("WithoutTokenAsksForIt", func(t *testing.T) {
			tb := fresh(t)
			for _, path := range []string{"/app/", "/"} {
				tb.run("open "+path, chromedp.Navigate(base+path), chromedp.WaitVisible(chromedp.CSS(`[data-testid="token-input"]`)))
				var text string
				tb.eval(`document.body.innerText`, &text)
				if strings.Contains(text, "secret-gui-workspace") || !strings.Contains(text, "token") {
					tb.fail("%s without the token shows %q", path, text)
				}
			}
			tb.run("a wrong token", chromedp.Navigate(base+"/app/?token=not-the-token-at-all"),
				chromedp.WaitVisible(chromedp.CSS(`[data-testid="token-error"]`)))
		})
		t.Run("StartupURL", func(t *testing.T) {
			tb := fresh(t)
			tb.run("open the startup URL", chromedp.Navigate(base+"/app/?token="+h.token))
			signedIn(tb)
		})
		t.Run("TypedToken", func(t *testing.T) {
			tb := fresh(t)
			tb.run("type the token",
				chromedp.Navigate(base+"/app/"),
				chromedp.SendKeys(chromedp.CSS(`[data-testid="token-input"]`), h.token),
				chromedp.Submit(chromedp.CSS(`[data-testid="token-input"]`)),
			)
			signedIn(tb)
		})
	})

	// The agent asks to leave the sandbox; the person allows it in the
	// conversation and the reply shows the command's output.
	t.Run("ApproveCommand", func(t *testing.T) {
		_, tb, _, parentID, _ := setup(t, "hello")
		tb.run("type and send",
			chromedp.SendKeys(chromedp.CSS(`[data-testid="composer-input"]`), approvalPrompt),
			chromedp.Click(chromedp.CSS(`[data-testid="send"]`)),
		)
		tb.run("the request is shown", chromedp.WaitVisible(chromedp.CSS(
			activeSel(parentID)+` [data-testid="approval"][data-kind="COMMAND"]`)))
		tb.click("allow", activeSel(parentID)+` [data-testid="approval-decision"][data-decision="ACCEPT"]`)
		tb.waitJS("the reply with the output", fmt.Sprintf(`(() => {
		  const s = document.querySelector(%q);
		  return !!s && s.dataset.status === "READY" && !s.querySelector('[data-testid="approval"]') &&
		    [...s.querySelectorAll('[data-testid="message"][data-role="assistant"]')].some((m) => m.textContent.includes("gui-approved-31"));
		})()`, activeSel(parentID)))
		tb.noError()
	})

	t.Run("CreateWorkspaceAndSession", func(t *testing.T) {
		h := shared.forGUI(t)
		tb := openTab(t, browser, base)
		tb.run("load the GUI",
			chromedp.Navigate(tb.url+"/app/"),
			chromedp.WaitVisible(chromedp.CSS(`body[data-ready="true"]`)),
		)
		// With no workspace yet the form is open already.
		var open bool
		tb.eval(`document.querySelector('[data-testid="workspace-form"]').checkVisibility()`, &open)
		if !open {
			tb.click("new workspace", `[data-testid="new-workspace"]`)
		}
		root := t.TempDir()
		tb.run("fill the workspace form",
			chromedp.SendKeys(chromedp.CSS(`[data-testid="workspace-name"]`), "From the GUI"),
			chromedp.SendKeys(chromedp.CSS(`[data-testid="workspace-root"]`), root),
			chromedp.Click(chromedp.CSS(`[data-testid="create-workspace"]`)),
		)
		var ws string
		tb.waitJS("the new workspace to be selected", `(() => { const s = document.querySelector('[data-testid="workspace-select"]');
		  return s.selectedOptions.length === 1 && s.selectedOptions[0].textContent === "From the GUI"; })()`)
		tb.eval(`document.querySelector('[data-testid="workspace-select"]').value`, &ws)
		var stored struct {
			Workspace *struct{ Name, RootPath string }
		}
		h.must(`query($id: ID!) { workspace(id: $id) { name rootPath } }`, map[string]any{"id": ws}, &stored)
		if stored.Workspace == nil || stored.Workspace.RootPath != root {
			t.Fatalf("workspace %s = %+v", ws, stored.Workspace)
		}
		tb.run("live", chromedp.WaitVisible(chromedp.CSS(`[data-testid="connection"][data-state="live"]`)))

		tb.click("new session", `[data-testid="new-session"]`)
		sessionID := tb.waitActiveOther("")
		tb.run("the session is listed", chromedp.WaitVisible(chromedp.CSS(sessionItemSel(sessionID))))
		tb.run("send a message",
			chromedp.SendKeys(chromedp.CSS(`[data-testid="composer-input"]`), "hello from the GUI"),
			chromedp.Click(chromedp.CSS(`[data-testid="send"]`)),
		)
		tb.waitJS("the reply", fmt.Sprintf(`[...document.querySelectorAll('%s [data-testid="turn"][data-status="COMPLETED"] [data-testid="message"][data-role="assistant"]')]
		  .some((m) => m.textContent.includes("reply: hello from the GUI"))`, activeSel(sessionID)))
		tb.waitJS("the composer to be cleared and ready", `(() => {
		  const i = document.querySelector('[data-testid="composer-input"]'), b = document.querySelector('[data-testid="send"]');
		  return i.value === "" && !b.disabled; })()`)
		tb.noError()
	})

	t.Run("ConversationMenuForksWithoutLastTurnId", func(t *testing.T) {
		h, tb, ws, parentID, _ := setup(t, "turn one", "turn two")
		tb.click("fork conversation", `[data-testid="fork-conversation"]`)
		childID := tb.waitActiveOther(parentID)

		child := h.lineage(ws, childID)
		if child.Parent == nil || child.Parent.ID != parentID || child.ForkedFrom == nil {
			t.Fatalf("child lineage = %+v", child)
		}
		if child.ForkedFrom.LastTurnID != nil {
			t.Errorf("the conversation fork sent lastTurnId %q", *child.ForkedFrom.LastTurnID)
		}
		if got := child.userTexts(); !slices.Equal(got, []string{"turn one", "turn two"}) {
			t.Errorf("child history = %q, want the whole conversation", got)
		}
		tb.run("the child shows both turns", chromedp.WaitVisible(chromedp.CSS(
			activeSel(childID)+` [data-testid="turn"]:nth-of-type(2)`)))
		tb.noError()
	})

	t.Run("TurnMenuForksWithSelectedTurnId", func(t *testing.T) {
		h, tb, ws, parentID, turns := setup(t, "turn one", "turn two")
		tb.click("fork from turn 1", forkFromHereSel(turns[0]))
		childID := tb.waitActiveOther(parentID)

		child := h.lineage(ws, childID)
		if child.ForkedFrom == nil || child.ForkedFrom.LastTurnID == nil || *child.ForkedFrom.LastTurnID != turns[0] {
			t.Fatalf("child forkedFrom = %+v, want lastTurnId %s", child.ForkedFrom, turns[0])
		}
		if got := child.userTexts(); !slices.Equal(got, []string{"turn one"}) {
			t.Errorf("child history = %q, want turn one only", got)
		}
		var n int
		tb.waitJS("the child's turns", fmt.Sprintf(`document.querySelectorAll('%s [data-testid="turn"]').length === 1`, activeSel(childID)))
		tb.eval(`document.querySelectorAll('[data-testid="turn"]').length`, &n)
		if n != 1 {
			t.Errorf("the child shows %d turns", n)
		}
		tb.noError()
	})

	t.Run("RunningTurnDisablesForkFromHere", func(t *testing.T) {
		_, tb, _, parentID, turns := setup(t, "turn one")
		startSlowTurn(t, tb, parentID)
		var running string
		tb.eval(`document.querySelector('[data-testid="turn"][data-status="IN_PROGRESS"]').dataset.turnId`, &running)
		if running == "" || running == turns[0] {
			t.Fatalf("running turn id = %q", running)
		}
		var state struct {
			RunningDisabled, CompletedDisabled, SendDisabled, InterruptShown bool
		}
		tb.waitJS("the session to be working", `document.querySelector('[data-testid="active-session"]').dataset.status === "WORKING"`)
		// The send's own request may still be in flight (all actions are
		// disabled until it answers): wait for the completed turn's action.
		tb.waitJS("the completed turn's Fork from here", fmt.Sprintf(`!document.querySelector('%s').disabled`, forkFromHereSel(turns[0])))
		tb.eval(fmt.Sprintf(`({
		  runningDisabled: document.querySelector('%s').disabled,
		  completedDisabled: document.querySelector('%s').disabled,
		  sendDisabled: document.querySelector('[data-testid="send"]').disabled,
		  interruptShown: !document.querySelector('[data-testid="interrupt"]').hidden,
		})`, forkFromHereSel(running), forkFromHereSel(turns[0])), &state)
		if !state.RunningDisabled {
			t.Error("Fork from here is enabled on the running turn")
		}
		if state.CompletedDisabled {
			t.Error("Fork from here is disabled on the completed turn")
		}
		if !state.SendDisabled || !state.InterruptShown {
			t.Errorf("while working: send disabled %v, interrupt shown %v", state.SendDisabled, state.InterruptShown)
		}
		tb.screenshot("running-turn.png")

		interruptAndWait(t, tb, parentID)
		var after bool
		tb.eval(fmt.Sprintf(`document.querySelector('%s').disabled`, forkFromHereSel(running)), &after)
		if !after {
			t.Error("Fork from here is enabled on an interrupted turn")
		}
		tb.noError()
	})

	t.Run("SuccessfulForkActivatesChild", func(t *testing.T) {
		h, tb, ws, parentID, _ := setup(t, "turn one")
		tb.click("fork conversation", `[data-testid="fork-conversation"]`)
		childID := tb.waitActiveOther(parentID)
		parent := h.lineage(ws, parentID)
		if len(parent.Children) != 1 || parent.Children[0].ID != childID {
			t.Fatalf("the parent's children = %+v, the GUI activated %s", parent.Children, childID)
		}
		var item struct {
			Current string
			Depth   string
			Text    string
		}
		tb.run("the child is listed", chromedp.WaitVisible(chromedp.CSS(sessionItemSel(childID))))
		tb.eval(fmt.Sprintf(`(() => { const e = document.querySelector('%s');
		  return { current: e.getAttribute("aria-current") || "", depth: e.dataset.depth, text: e.textContent }; })()`,
			sessionItemSel(childID)), &item)
		if item.Current != "true" || item.Depth != "1" || !strings.Contains(item.Text, "Build login(fork1)") {
			t.Errorf("the child's list item = %+v", item)
		}

		// The child is usable: a turn sent from its composer completes.
		tb.run("send in the child",
			chromedp.SendKeys(chromedp.CSS(`[data-testid="composer-input"]`), "hello child"),
			chromedp.Click(chromedp.CSS(`[data-testid="send"]`)),
		)
		tb.waitJS("the child's reply", fmt.Sprintf(`[...document.querySelectorAll('%s [data-testid="message"][data-role="assistant"]')]
		  .some((m) => m.textContent.includes("reply: hello child"))`, activeSel(childID)))

		// A second fork gets a fresh request id: a second child, not a replay.
		tb.click("parent indicator", `[data-testid="parent-indicator"]`)
		tb.run("the parent is back", chromedp.WaitVisible(chromedp.CSS(activeSel(parentID))))
		tb.click("fork conversation again", `[data-testid="fork-conversation"]`)
		second := tb.waitActiveOther(parentID)
		if second == childID {
			t.Fatal("the second fork activated the first child")
		}
		tb.run("the second child is titled", chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`%s [data-testid="session-title"]`, activeSel(second)))))
		var title string
		tb.eval(`document.querySelector('[data-testid="session-title"]').textContent`, &title)
		if title != "Build login(fork2)" {
			t.Errorf("second child title = %q", title)
		}
		tb.screenshot("forked.png")
		tb.noError()
	})

	t.Run("ForkedSessionHeaderShowsParent", func(t *testing.T) {
		h, tb, ws, parentID, _ := setup(t, "turn one")
		var header bool
		tb.eval(`document.querySelector('[data-testid="parent-indicator"]').hidden`, &header)
		if !header {
			t.Error("a root session shows a parent indicator")
		}
		// A fork made elsewhere (the API) appears live in the list.
		child, _, errs := h.fork(map[string]any{"workspaceId": ws, "agentSessionId": parentID, "requestId": "gui-header"})
		if len(errs) > 0 {
			t.Fatalf("fork: %+v", errs)
		}
		tb.click("the child in the list", sessionItemSel(child.ID))
		tb.run("the child's header", chromedp.WaitVisible(chromedp.CSS(activeSel(child.ID)+` [data-testid="parent-indicator"]`)))
		var text, parentAttr string
		tb.eval(`document.querySelector('[data-testid="parent-indicator"]').textContent`, &text)
		tb.eval(`document.querySelector('[data-testid="parent-indicator"]').dataset.parentId`, &parentAttr)
		if !strings.Contains(text, "Forked from") || !strings.Contains(text, "Build login") || parentAttr != parentID {
			t.Errorf("parent indicator = %q (parent %q)", text, parentAttr)
		}
		tb.click("parent indicator", `[data-testid="parent-indicator"]`)
		tb.run("the parent is active", chromedp.WaitVisible(chromedp.CSS(activeSel(parentID))))
		tb.waitJS("no indicator on the parent", `document.querySelector('[data-testid="parent-indicator"]').hidden`)
		tb.noError()
	})

	t.Run("StreamedTextAppearsLive", func(t *testing.T) {
		_, tb, _, parentID, _ := setup(t, "turn one")
		startSlowTurn(t, tb, parentID)
		// The model holds the turn open after its first delta: text shown
		// now came over the subscription.
		tb.waitJS("the first streamed words", fmt.Sprintf(`[...document.querySelectorAll('%s [data-testid="turn"][data-status="IN_PROGRESS"] [data-testid="message"][data-role="assistant"]')]
		  .some((m) => m.textContent.includes(%q))`, activeSel(parentID), slowFirstChunk))
		interruptAndWait(t, tb, parentID)
		tb.noError()
	})

	t.Run("ErrorBannerShowsFailedFork", func(t *testing.T) {
		_, tb, _, parentID, _ := setup(t, "turn one")
		startSlowTurn(t, tb, parentID)
		tb.click("fork conversation", `[data-testid="fork-conversation"]`)
		tb.run("the error banner", chromedp.WaitVisible(chromedp.CSS(`[data-testid="error-banner"][role="alert"]`)))
		var banner struct{ Code, Text string }
		tb.eval(`(() => { const b = document.querySelector('[data-testid="error-banner"]');
		  return { code: b.dataset.code, text: b.textContent }; })()`, &banner)
		if banner.Code != "agent.fork_session_not_idle" || !strings.Contains(banner.Text, "agent.fork_session_not_idle") ||
			!strings.Contains(banner.Text, "not idle") {
			t.Errorf("banner = %+v", banner)
		}
		if id := tb.activeID(); id != parentID {
			t.Errorf("a failed fork activated %s", id)
		}
		tb.screenshot("error.png")
		interruptAndWait(t, tb, parentID)
	})
}
