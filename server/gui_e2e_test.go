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

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

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

// itemsPrompt makes the model run a command and add a file.
const itemsPrompt = "show me your items"

func chromiumPath(t testing.TB) string {
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
func startBrowser(t testing.TB) context.Context {
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
func guiServer(t testing.TB, h *harness) string {
	t.Helper()
	return h.url
}

// tab is one browser tab on the GUI, bound to a subtest.
type tab struct {
	t   testing.TB
	ctx context.Context
	url string

	mu   sync.Mutex
	done bool
	logs []string
}

func openTab(t testing.TB, browser context.Context, baseURL string) *tab {
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
	// Every Content-Security-Policy violation the page meets is recorded
	// (an inline style a component injects, a request to another origin).
	_, err = chromedp.Run(ctx, chromedp.Action[chromedp.Void](func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: cspWatcher})
		return chromedp.Void{}, err
	}))
	if err != nil {
		t.Fatalf("install the CSP watcher: %v", err)
	}
	// Sign the browser in as a person does: the startup URL with ?token=
	// stores the token in the origin's storage (TestGUI's TokenFlow checks
	// that flow).
	if tok := tokenFor(baseURL); tok != "" {
		tb.run("sign in with the token", chromedp.Navigate(baseURL+"/app/?token="+tok))
	}
	return tb
}

const cspWatcher = `window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (e) =>
  window.__cspViolations.push(e.violatedDirective + " " + (e.blockedURI || "inline") + " " + (e.sourceFile || "")));`

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

// click clicks the element sel once it is shown and enabled (neither
// disabled nor aria-disabled). Finding and clicking happen in one
// evaluation in the page: the live list re-renders on every activity
// event, and a node found in one step can be gone in the next
// (chromedp.Click failed with "Could not find node" that way).
func (tb *tab) click(what, sel string) {
	tb.t.Helper()
	tb.waitJS("to click "+what, fmt.Sprintf(`(() => {
	  const el = document.querySelector(%q);
	  if (!el || el.disabled || el.getAttribute("aria-disabled") === "true" || el.getClientRects().length === 0) return false;
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
	var csp []string
	tb.eval(`window.__cspViolations || []`, &csp)
	if len(csp) > 0 {
		tb.fail("the page broke its Content-Security-Policy: %q", csp)
	}
}

// axTreeItems returns the accessible names Chromium computed for the
// page's treeitems, in document order.
func (tb *tab) axTreeItems() []string {
	tb.t.Helper()
	return tb.axNames("treeitem")
}

// axNames returns the accessible names Chromium computed for the page's
// elements of an ARIA role, in document order.
func (tb *tab) axNames(role string) []string {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, guiWait)
	defer cancel()
	names, err := chromedp.Run(ctx, chromedp.Action[[]string](func(ctx context.Context, tg *chromedp.Target) ([]string, error) {
		res, err := cdp.Call(ctx, tg, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{})
		if err != nil {
			return nil, err
		}
		var out []string
		for _, n := range res.Nodes {
			if n.Ignored || n.Role == nil || string(n.Role.Value) != `"`+role+`"` {
				continue
			}
			var name string
			if n.Name != nil {
				_ = json.Unmarshal(n.Name.Value, &name)
			}
			out = append(out, name)
		}
		return out, nil
	}))
	if err != nil {
		tb.fail("accessibility tree: %v", err)
	}
	return names
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

// forkInDialog makes the fork the way a person does since issue 24:
// `Fork conversation` or `Fork from here` (clicked before) opens the fork
// dialog, whose `Fork` button (Same folder, the parent's settings) makes
// it.
func (tb *tab) forkInDialog() {
	tb.t.Helper()
	tb.waitJS("the fork dialog", `!!document.querySelector('[role="dialog"][data-testid="fork-dialog"]')`)
	tb.click("Fork in the fork dialog", `[role="dialog"][data-testid="fork-dialog"] [data-testid="fork-dialog-submit"]`)
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
		if r.LastUserText() == itemsPrompt {
			// A command, then a file added by apply_patch, then the answer.
			switch len(r.FunctionCallOutputs()) {
			case 0:
				return codextest.Reply{FunctionCall: &codextest.FunctionCall{Cmd: "echo gui-items-7"}}
			case 1:
				return codextest.Reply{FunctionCall: codextest.PatchCommand("notes.txt", "hello from the patch")}
			default:
				return codextest.Reply{Text: "done with the items"}
			}
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
	// token typed into the page that asks for it) stores the token in the
	// page's own origin's localStorage and leaves an address without it;
	// no cookie is set. The GUI then works, its WebSocket included, and
	// GraphiQL of the same origin needs no token again. Without it the
	// pages show no data. Each case runs in a fresh browser context.
	t.Run("TokenFlow", func(t *testing.T) {
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
				Href, Cookie, Stored string
				Listed               bool
			}
			tb.eval(`({ href: location.origin + location.pathname + location.search, cookie: document.cookie,
			  stored: localStorage.getItem("tuttid-token") || "",
			  listed: [...document.querySelectorAll('[data-testid="workspace-select"] option')].some((o) => o.textContent === "secret-gui-workspace") })`, &state)
			if state.Href != base+"/app/" || state.Cookie != "" || state.Stored != h.token || !state.Listed {
				tb.fail("after signing in: %+v (want %s/app/, no cookie, the token stored, the workspace listed)", state, base)
			}
			ctx, cancel := context.WithTimeout(tb.ctx, guiWait)
			defer cancel()
			res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{base + "/"}})
			if err != nil {
				tb.fail("cookies: %v", err)
			}
			if len(res.Cookies) != 0 {
				tb.fail("cookies: %+v, want none", res.Cookies)
			}
			// GraphiQL of the same origin uses the stored token.
			tb.run("GraphiQL without ?token=", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(`.graphiql-container`)))
		}
		t.Run("WithoutTokenAsksForIt", func(t *testing.T) {
			tb := fresh(t)
			for path, sel := range map[string]string{"/app/": `[data-testid="sign-in"]`, "/": `[data-testid="token-input"]`} {
				tb.run("open "+path, chromedp.Navigate(base+path), chromedp.WaitVisible(chromedp.CSS(sel)))
				var text string
				tb.eval(`document.body.innerText`, &text)
				if strings.Contains(text, "secret-gui-workspace") || !strings.Contains(text, "token") {
					tb.fail("%s without the token shows %q", path, text)
				}
			}
			tb.run("a wrong token", chromedp.Navigate(base+"/app/?token=not-the-token-at-all"),
				chromedp.WaitVisible(chromedp.CSS(`[data-testid="token-error"]`)))
			// Issue 43.10: it says the address's token was refused, not one
			// "this page had".
			var said string
			tb.eval(`document.querySelector('[data-testid="token-error"]').textContent`, &said)
			if !strings.Contains(said, "token in the address") {
				tb.fail("the refusal of the address's token says %q", said)
			}
			var href string
			tb.eval(`location.href`, &href)
			if strings.Contains(href, "token=") {
				tb.fail("the token stays in the address: %s", href)
			}
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
				chromedp.WaitVisible(chromedp.CSS(`[data-testid="sign-in"] input`)),
				chromedp.SendKeys(chromedp.CSS(`[data-testid="sign-in"] input`), h.token),
				chromedp.Click(chromedp.CSS(`[data-testid="sign-in"] button[type="submit"]`)),
			)
			signedIn(tb)
		})
	})

	// A server on another loopback port, which the signed-in person's
	// browser visits (another user's server, any dev server), gets no
	// credential: the browser sends it no cookie, its page cannot read the
	// token (another origin's storage), and its page's requests to tuttid,
	// with the browser's credentials, change nothing (issue 22, 13).
	t.Run("OtherPortGetsNoCredential", func(t *testing.T) {
		h := shared.forGUI(t)
		ws := h.createWorkspace(t.Name())
		root := h.startSession(ws, "Build login")
		own := openTab(t, browser, base) // signed in: the token is in tuttid's origin
		own.open(ws, root.ID)
		other := startOtherPortServer(t, base)
		if port(&harness{url: other.url}) == port(h) {
			t.Fatal("the other server has tuttid's port")
		}
		tb := openTab(t, browser, other.url)
		tb.run("open the other port's page", chromedp.Navigate(other.url+"/"))
		tb.waitJS("the other page's attempts", `!!window.__result`)
		var res struct{ Cookie, Stored, Fetch, NoCors, WS string }
		tb.eval(`window.__result`, &res)
		if res.Cookie != "" || res.Stored != "" {
			t.Errorf("the other page reads cookie %q, stored token %q", res.Cookie, res.Stored)
		}
		if !strings.HasPrefix(res.Fetch, "failed") {
			t.Errorf("the other page's fetch with credentials: %s", res.Fetch)
		}
		if strings.HasPrefix(res.WS, "mutated") {
			t.Errorf("the other page's WebSocket ran a mutation: %s", res.WS)
		}
		for _, hdr := range other.received() {
			if strings.Contains(hdr, h.token) || strings.Contains(hdr, "tuttid") {
				t.Errorf("the other port's server received %q", hdr)
			}
		}
		var out struct{ Workspaces []struct{ Name string } }
		h.must(`{ workspaces { name } }`, nil, &out)
		for _, w := range out.Workspaces {
			if w.Name == otherPortWorkspace {
				t.Errorf("the other page's requests created the workspace %q: %+v", w.Name, res)
			}
		}
		t.Logf("the other page got: %+v", res)
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
		tb.screenshot("approval.png")
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
		tb.forkInDialog()
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
		tb.forkInDialog()
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
		tb.forkInDialog()
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
		  return { current: e.getAttribute("aria-selected") || "", depth: e.dataset.depth, text: e.textContent }; })()`,
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
		tb.forkInDialog()
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
		tb.forkInDialog()
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

	t.Run("TreeIsAnAccessibleKeyboardTree", func(t *testing.T) {
		h, tb, ws, parentID, turns := setup(t, "turn one", "turn two")
		first, _, errs := h.fork(map[string]any{"workspaceId": ws, "agentSessionId": parentID, "requestId": "tree-1", "lastTurnId": turns[0]})
		if len(errs) > 0 {
			t.Fatalf("fork: %+v", errs)
		}
		grand, _, errs := h.fork(map[string]any{"workspaceId": ws, "agentSessionId": first.ID, "requestId": "tree-2"})
		if len(errs) > 0 {
			t.Fatalf("fork: %+v", errs)
		}
		tb.run("the forks appear live", chromedp.WaitVisible(chromedp.CSS(sessionItemSel(grand.ID))))
		var tree struct {
			Trees int
			Items []struct {
				ID, Level, Selected string
			}
		}
		tb.eval(`({ trees: document.querySelectorAll('[role="tree"]').length,
		  items: [...document.querySelectorAll('[role="treeitem"]')].map((e) => ({
		    id: e.dataset.sessionId, level: e.getAttribute("aria-level"), selected: e.getAttribute("aria-selected") })) })`, &tree)
		want := []struct{ id, level, selected string }{{parentID, "1", "true"}, {first.ID, "2", "false"}, {grand.ID, "3", "false"}}
		if tree.Trees != 1 || len(tree.Items) != len(want) {
			t.Fatalf("tree = %+v", tree)
		}
		for i, w := range want {
			if got := tree.Items[i]; got.ID != w.id || got.Level != w.level || got.Selected != w.selected {
				t.Errorf("treeitem %d = %+v, want %+v", i, got, w)
			}
		}
		titles := []string{"Build login", first.DisplayTitle, grand.DisplayTitle}
		// Chromium updates its accessibility tree after the DOM: a treeitem
		// just made visible may not have its name yet (CI saw "").
		named := func(names []string) bool {
			return len(names) == len(titles) && !slices.ContainsFunc(names, func(n string) bool { return n == "" })
		}
		names := tb.axTreeItems()
		for deadline := time.Now().Add(guiWait); !named(names) && time.Now().Before(deadline); names = tb.axTreeItems() {
			time.Sleep(50 * time.Millisecond)
		}
		if len(names) != len(titles) {
			t.Fatalf("accessible treeitems = %q", names)
		}
		for i, n := range names {
			if !strings.HasPrefix(n, titles[i]) {
				t.Errorf("treeitem %d is named %q, want it to start with %q", i, n, titles[i])
			}
		}

		// Keyboard: down twice from the shown session, then Enter.
		tb.eval(fmt.Sprintf(`document.querySelector('%s').focus(), true`, sessionItemSel(parentID)), new(bool))
		tb.run("arrow down, down, enter",
			chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.Enter))
		tb.run("the grandchild is shown", chromedp.WaitVisible(chromedp.CSS(activeSel(grand.ID))))
		var sel struct {
			Selected []string
			Hash     string
		}
		tb.eval(`({ selected: [...document.querySelectorAll('[role="treeitem"][aria-selected="true"]')].map((e) => e.dataset.sessionId), hash: location.hash })`, &sel)
		if !slices.Equal(sel.Selected, []string{grand.ID}) || !strings.Contains(sel.Hash, "s="+grand.ID) || !strings.Contains(sel.Hash, "w="+ws) {
			t.Errorf("after Enter: selected %q, URL hash %q", sel.Selected, sel.Hash)
		}
		// Left goes to the parent item; Left again collapses it, whose
		// items stay in the page, hidden.
		tb.run("arrow left twice", chromedp.KeyEvent(kb.ArrowLeft), chromedp.KeyEvent(kb.ArrowLeft))
		tb.waitJS("the child's branch collapsed", fmt.Sprintf(`(() => { const e = document.querySelector('%s');
		  return e.getAttribute("aria-expanded") === "false" && !!document.querySelector('%s') && !document.querySelector('%s').checkVisibility(); })()`,
			sessionItemSel(first.ID), sessionItemSel(grand.ID), sessionItemSel(grand.ID)))

		// The URL opens the same view after a reload.
		tb.run("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(activeSel(grand.ID))))
		tb.noError()
	})

	t.Run("ForkMarkersAndInheritedTurns", func(t *testing.T) {
		_, tb, _, parentID, turns := setup(t, "turn one", "turn two")
		tb.click("fork from turn 1", forkFromHereSel(turns[0]))
		tb.forkInDialog()
		childID := tb.waitActiveOther(parentID)
		tb.run("the child's inherited turn", chromedp.WaitVisible(chromedp.CSS(activeSel(childID)+` `+turnSel(turns[0])+`[data-inherited="true"]`)))
		var divider string
		tb.eval(`document.querySelector('[data-testid="fork-divider"]').textContent`, &divider)
		if !strings.Contains(divider, "Forked from") || !strings.Contains(divider, "Build login") {
			t.Errorf("divider = %q, want it to name the parent", divider)
		}
		tb.run("send in the child",
			chromedp.SendKeys(chromedp.CSS(`[data-testid="composer-input"]`), "child's own"),
			chromedp.Click(chromedp.CSS(`[data-testid="send"]`)),
		)
		tb.waitJS("the child's own turn, not inherited", fmt.Sprintf(`(() => {
		  const ts = [...document.querySelectorAll('%s [data-testid="turn"]')];
		  return ts.length === 2 && ts[0].dataset.inherited === "true" && ts[1].dataset.inherited === undefined
		    && ts[1].dataset.status === "COMPLETED"; })()`, activeSel(childID)))
		tb.screenshot("child-inherited.png")

		tb.click("parent indicator", `[data-testid="parent-indicator"]`)
		tb.run("the parent", chromedp.WaitVisible(chromedp.CSS(activeSel(parentID))))
		var links []string
		tb.waitJS("the fork marker", fmt.Sprintf(`!!document.querySelector('%s [data-testid="fork-marker"] a')`, turnSel(turns[0])))
		tb.eval(fmt.Sprintf(`[...document.querySelectorAll('%s a')].map((a) => a.getAttribute("href"))`, turnSel(turns[0])), &links)
		if len(links) != 1 || !strings.Contains(links[0], childID) {
			t.Errorf("links in the forked-from turn = %q, want one holding %s", links, childID)
		}
		var inSecond int
		tb.eval(fmt.Sprintf(`document.querySelectorAll('%s [data-testid="fork-marker"]').length`, turnSel(turns[1])), &inSecond)
		if inSecond != 0 {
			t.Error("the turn not forked from has a fork marker")
		}
		tb.screenshot("conversation-fork-markers.png")
		tb.click("the marker's link", turnSel(turns[0])+` [data-testid="fork-marker"] a`)
		tb.run("the child again", chromedp.WaitVisible(chromedp.CSS(activeSel(childID))))
		tb.noError()
	})

	t.Run("TreeFitsAt800And1280", func(t *testing.T) {
		h, tb, ws, parentID, turns := setup(t, "turn one")
		// A deep tree of long titles, each with its status badge.
		prev := parentID
		for i := range 4 {
			c, _, errs := h.fork(map[string]any{"workspaceId": ws, "agentSessionId": prev, "requestId": fmt.Sprintf("fit-%d", i),
				"lastTurnId": turns[0], "title": fmt.Sprintf("Refactor the authentication middleware, attempt number %d with a long title", i)})
			if len(errs) > 0 {
				t.Fatalf("fork: %+v", errs)
			}
			prev = c.ID
		}
		tb.run("the deepest fork is listed", chromedp.WaitVisible(chromedp.CSS(sessionItemSel(prev))))
		for _, width := range []int64{800, 1280} {
			tb.run(fmt.Sprintf("viewport %d", width), chromedp.EmulateViewport(width, 720))
			var m struct {
				TreeVisible                   bool
				PageOverflow, SidebarOverflow int
				Clipped                       []string
			}
			tb.waitJS("layout", `document.documentElement.clientWidth > 0`)
			tb.eval(`(() => {
			  const tree = document.querySelector('[role="tree"]'), side = tree.closest("nav");
			  const box = side.getBoundingClientRect();
			  const clipped = [];
			  for (const item of tree.querySelectorAll('[role="treeitem"]')) {
			    for (const part of item.querySelectorAll(':scope > .tree-row .tree-title, :scope > .tree-row [data-testid="status"]')) {
			      const r = part.getBoundingClientRect();
			      const inside = r.left >= box.left - 0.5 && r.right <= box.right + 0.5 && r.width > 0;
			      const cut = part.scrollWidth > part.clientWidth + 1;
			      if (!inside || cut) clipped.push(item.dataset.sessionId + " " + part.className + " " + JSON.stringify(r));
			    }
			  }
			  // The session's buttons too: inside the main area, none cut.
			  const main = document.querySelector("main").getBoundingClientRect();
			  for (const b of document.querySelectorAll('[role="toolbar"] button, [data-testid="send"]')) {
			    const r = b.getBoundingClientRect();
			    if (r.left < main.left - 0.5 || r.right > main.right + 0.5 || b.scrollWidth > b.clientWidth + 1) clipped.push(b.textContent + " " + JSON.stringify(r));
			  }
			  const tr = tree.getBoundingClientRect();
			  return { treeVisible: tr.width > 0 && tr.height > 0,
			    pageOverflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
			    sidebarOverflow: side.scrollWidth - side.clientWidth, clipped };
			})()`, &m)
			if !m.TreeVisible || m.PageOverflow > 0 || m.SidebarOverflow > 0 || len(m.Clipped) > 0 {
				t.Errorf("at %d px: %+v", width, m)
			}
			tb.screenshot(fmt.Sprintf("tree-%d.png", width))
		}
		tb.noError()
	})

	t.Run("CompareShowsSharedPrefixAndBothContinuations", func(t *testing.T) {
		h, tb, ws, parentID, turns := setup(t, "shared one", "parent two")
		child, _, errs := h.fork(map[string]any{"workspaceId": ws, "agentSessionId": parentID, "requestId": "cmp-1", "lastTurnId": turns[0]})
		if len(errs) > 0 {
			t.Fatalf("fork: %+v", errs)
		}
		childTurn := h.send(ws, child.ID, "child two")
		h.waitTurn(ws, child.ID, childTurn, "COMPLETED")
		tb.run("the fork is listed", chromedp.WaitVisible(chromedp.CSS(sessionItemSel(child.ID))))
		tb.click("compare", `[data-testid="compare"]`)
		tb.waitJS("the picker", `!!document.querySelector('[data-testid="compare-with"]')`)
		tb.eval(fmt.Sprintf(`(() => { const s = document.querySelector('[data-testid="compare-with"]');
		  s.value = %q; s.dispatchEvent(new Event("change", { bubbles: true })); return s.value; })()`, child.ID), new(string))
		tb.click("show side by side", `[data-testid="compare-go"]`)
		tb.run("the comparison", chromedp.WaitVisible(chromedp.CSS(`[data-testid="comparison"]`)))
		var cmp struct {
			Shared      string
			SharedTurns []string
			A, B        []string
			Hash        string
		}
		tb.eval(`(() => { const c = document.querySelector('[data-testid="comparison"]');
		  const texts = (sel) => [...c.querySelectorAll(sel + ' [data-testid="message"][data-role="user"]')].map((m) => m.textContent);
		  return { shared: c.querySelector('[data-testid="shared-prefix"]').dataset.count,
		    sharedTurns: texts('[data-testid="shared-prefix"]'),
		    a: texts('[data-testid="compare-a"]'), b: texts('[data-testid="compare-b"]'), hash: location.hash }; })()`, &cmp)
		if cmp.Shared != "1" || len(cmp.SharedTurns) != 1 || !strings.Contains(cmp.SharedTurns[0], "shared one") {
			t.Errorf("shared prefix = %s %q", cmp.Shared, cmp.SharedTurns)
		}
		if len(cmp.A) != 1 || !strings.Contains(cmp.A[0], "parent two") || len(cmp.B) != 1 || !strings.Contains(cmp.B[0], "child two") {
			t.Errorf("continuations: a %q, b %q", cmp.A, cmp.B)
		}
		var collapsed bool
		tb.eval(`!document.querySelector('[data-testid="shared-prefix"]').open`, &collapsed)
		if !collapsed {
			t.Error("the shared prefix is not collapsed")
		}
		if !strings.Contains(cmp.Hash, "c="+child.ID) {
			t.Errorf("URL hash %q does not name the comparison", cmp.Hash)
		}
		tb.screenshot("compare.png")
		tb.run("reload keeps the comparison", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`[data-testid="comparison"][data-b="`+child.ID+`"]`)))
		tb.noError()
	})

	t.Run("RenameArchiveAndDeleteSubtree", func(t *testing.T) {
		h, tb, ws, parentID, turns := setup(t, "turn one")
		child, _, errs := h.fork(map[string]any{"workspaceId": ws, "agentSessionId": parentID, "requestId": "tidy-1", "lastTurnId": turns[0]})
		if len(errs) > 0 {
			t.Fatalf("fork: %+v", errs)
		}
		grand, _, errs := h.fork(map[string]any{"workspaceId": ws, "agentSessionId": child.ID, "requestId": "tidy-2"})
		if len(errs) > 0 {
			t.Fatalf("fork: %+v", errs)
		}
		tb.click("the child", sessionItemSel(child.ID))
		tb.run("the child", chromedp.WaitVisible(chromedp.CSS(activeSel(child.ID))))

		// Rename.
		tb.click("rename", `[data-testid="rename"]`)
		tb.run("type a title", chromedp.WaitVisible(chromedp.CSS(`[data-testid="rename-input"]`)))
		tb.eval(`(() => { const i = document.querySelector('[data-testid="rename-input"]'); i.select(); return true; })()`, new(bool))
		tb.run("type", chromedp.SendKeys(chromedp.CSS(`[data-testid="rename-input"]`), "Try OAuth instead"))
		tb.click("save", `[data-testid="rename-save"]`)
		tb.waitJS("the new title in the header and the tree", fmt.Sprintf(`document.querySelector('[data-testid="session-title"]')?.textContent === "Try OAuth instead"
		  && document.querySelector('%s .tree-title').textContent === "Try OAuth instead"`, sessionItemSel(child.ID)))
		if got := h.lineage(ws, child.ID).DisplayTitle; got != "Try OAuth instead" {
			t.Errorf("stored title = %q", got)
		}

		// Archive hides the branch from the tree; restore brings it back.
		tb.click("archive", `[data-testid="archive"]`)
		tb.waitJS("the branch hidden", fmt.Sprintf(`!document.querySelector('%s') && !document.querySelector('%s') && !!document.querySelector('%s')`,
			sessionItemSel(child.ID), sessionItemSel(grand.ID), sessionItemSel(parentID)))
		tb.click("restore", `[data-testid="restore"]`)
		tb.run("the branch is back", chromedp.WaitVisible(chromedp.CSS(sessionItemSel(grand.ID))))

		// Delete the child with its fork, after one confirmation.
		tb.click("delete", `[data-testid="delete"]`)
		var confirm string
		tb.waitJS("the confirmation", `!!document.querySelector('[data-testid="delete-confirm"]')`)
		tb.eval(`document.querySelector('[data-testid="delete-confirm"]').textContent`, &confirm)
		if !strings.Contains(confirm, "Try OAuth instead") || !strings.Contains(confirm, "1 fork") {
			t.Errorf("confirmation = %q", confirm)
		}
		tb.click("confirm", `[data-testid="delete-confirmed"]`)
		tb.run("the parent is shown", chromedp.WaitVisible(chromedp.CSS(activeSel(parentID))))
		tb.waitJS("both gone from the tree", fmt.Sprintf(`!document.querySelector('%s') && !document.querySelector('%s')`, sessionItemSel(child.ID), sessionItemSel(grand.ID)))
		for _, id := range []string{child.ID, grand.ID} {
			var out struct{ Session *struct{ ID string } }
			h.must(`query($ws: ID!, $id: ID!) { session(workspaceId: $ws, id: $id) { id } }`, map[string]any{"ws": ws, "id": id}, &out)
			if out.Session != nil {
				t.Errorf("session %s still exists", id)
			}
		}
		tb.noError()
	})

	t.Run("FailedSendKeepsTypedTextAndShowsCode", func(t *testing.T) {
		_, tb, _, parentID, _ := setup(t, "turn one")
		// Over the server's limit on a message's length: invalid_input.
		tb.eval(`(() => { const el = document.querySelector('[data-testid="composer-input"]');
		  const set = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, "value").set;
		  set.call(el, "x".repeat(300 * 1024)); el.dispatchEvent(new Event("input", { bubbles: true })); return true; })()`, new(bool))
		tb.click("send", `[data-testid="send"]`)
		tb.run("the error banner", chromedp.WaitVisible(chromedp.CSS(`[data-testid="error-banner"][data-code="invalid_input"]`)))
		var kept int
		tb.eval(`document.querySelector('[data-testid="composer-input"]').value.length`, &kept)
		if kept != 300*1024 {
			t.Errorf("the composer holds %d characters after the failed send, want the %d typed", kept, 300*1024)
		}
		var turns int
		tb.eval(fmt.Sprintf(`document.querySelectorAll('%s [data-testid="turn"]').length`, activeSel(parentID)), &turns)
		if turns != 1 {
			t.Errorf("%d turns shown after a refused send", turns)
		}
	})

	t.Run("TurnsArePagedAsTheUserScrollsBack", func(t *testing.T) {
		h := shared.forGUI(t)
		ws := h.createWorkspace(t.Name())
		s := h.startSession(ws, "Long one")
		// 30 turns of two messages each: more than the page the GUI loads.
		const n = 30
		var last string
		for i := range n {
			last = h.send(ws, s.ID, fmt.Sprintf("message %02d", i))
			h.waitTurn(ws, s.ID, last, "COMPLETED")
		}
		tb := openTab(t, browser, base)
		tb.open(ws, s.ID)
		tb.run("the last turn", chromedp.WaitVisible(chromedp.CSS(turnSel(last))))
		var first int
		tb.eval(`document.querySelectorAll('[data-testid="turn"]').length`, &first)
		if first >= n || first == 0 {
			t.Fatalf("the first page shows %d of %d turns, want a part", first, n)
		}
		var atBottom bool
		tb.eval(`(() => { const c = document.querySelector('[data-testid="conversation"]'); return c.scrollHeight - c.scrollTop - c.clientHeight < 60; })()`, &atBottom)
		if !atBottom {
			t.Error("the conversation does not open at its latest message")
		}
		// Scrolling back to the top loads the earlier turns.
		tb.waitJS("all turns after scrolling back", `(() => {
		  const c = document.querySelector('[data-testid="conversation"]'); c.scrollTop = 0;
		  return document.querySelectorAll('[data-testid="turn"]').length === 30
		    && [...document.querySelectorAll('[data-testid="message"][data-role="user"]')][0].textContent.includes("message 00"); })()`)
		tb.noError()
	})

	t.Run("LoadEarlierTurns", func(t *testing.T) {
		h := shared.forGUI(t)
		ws := h.createWorkspace(t.Name())
		s := h.startSession(ws, "Many turns")
		// More turns than the page the GUI shows (20).
		const n = 26
		var turns []string
		for i := range n {
			turns = append(turns, h.send(ws, s.ID, fmt.Sprintf("turn %02d", i)))
		}
		tb := openTab(t, browser, base)
		tb.open(ws, s.ID)
		tb.run("the last turn", chromedp.WaitVisible(chromedp.CSS(turnSel(turns[n-1]))))
		var shown int
		tb.eval(`document.querySelectorAll('[data-testid="turn"]').length`, &shown)
		if shown != 20 {
			t.Fatalf("the first page shows %d turns, want the latest 20", shown)
		}
		var firstShown string
		tb.eval(`document.querySelector('[data-testid="turn"]').dataset.turnId`, &firstShown)
		if firstShown != turns[n-20] {
			t.Errorf("the first turn shown is %s, want %s (the 7th)", firstShown, turns[n-20])
		}
		// The control is a button a screen reader names.
		if names := tb.axNames("button"); !slices.Contains(names, "Load earlier turns") {
			t.Fatalf("no button named \"Load earlier turns\" among %q", names)
		}
		// Activated from the keyboard, without scrolling to the top.
		tb.waitJS("focus and press the button", `(() => {
		  const b = document.querySelector('[data-testid="load-earlier"]'); if (!b) return false;
		  b.focus({ preventScroll: true }); return document.activeElement === b; })()`)
		tb.run("press Enter", chromedp.KeyEvent("\r"))
		tb.waitJS("every turn, oldest first", fmt.Sprintf(`(() => {
		  const ts = [...document.querySelectorAll('[data-testid="turn"]')];
		  return ts.length === %d && ts[0].dataset.turnId === %q
		    && ts[0].querySelector('[data-testid="message"][data-role="user"]').textContent.includes("turn 00"); })()`, n, turns[0]))
		tb.waitJS("the button gone once nothing is left", `!document.querySelector('[data-testid="load-earlier"]')`)
		// A new turn keeps the earlier turns loaded.
		last := h.send(ws, s.ID, "one more")
		tb.run("the new turn", chromedp.WaitVisible(chromedp.CSS(turnSel(last))))
		tb.waitJS("all turns still shown", fmt.Sprintf(`document.querySelectorAll('[data-testid="turn"]').length === %d`, n+1))
		tb.noError()
	})

	// The "done when", all in the page: chat, fork twice from
	// different turns, both forks marked on the parent, compare the two
	// branches side by side, archive one. Its screenshots are the README's.
	t.Run("NewcomerForksTwiceComparesAndArchives", func(t *testing.T) {
		h := shared.forGUI(t)
		ws := h.createWorkspace(t.Name())
		root := h.startSession(ws, "Build the login page")
		tb := openTab(t, browser, base)
		tb.open(ws, root.ID)
		say := func(sid, text string) {
			tb.run("type "+text,
				chromedp.SendKeys(chromedp.CSS(`[data-testid="composer-input"]`), text),
				chromedp.Click(chromedp.CSS(`[data-testid="send"]`)))
			tb.waitJS("the reply to "+text, fmt.Sprintf(`(() => { const s = document.querySelector('%s');
			  return !!s && s.dataset.status === "READY" && [...s.querySelectorAll('[data-testid="turn"][data-status="COMPLETED"] [data-testid="message"][data-role="assistant"]')]
			    .some((m) => m.textContent.includes(%q)) && !document.querySelector('[data-testid="send"]').disabled; })()`, activeSel(sid), "reply: "+text))
		}
		say(root.ID, "Sketch a login form")
		say(root.ID, "Store sessions in cookies")
		say(root.ID, "Add a logout button")
		rootTurns := h.lineage(ws, root.ID).Turns

		tb.click("fork from turn 1", forkFromHereSel(rootTurns[0].ID))
		tb.forkInDialog()
		oauth := tb.waitActiveOther(root.ID)
		say(oauth, "Use OAuth instead")
		tb.click("back to the parent", `[data-testid="parent-indicator"]`)
		tb.run("the parent", chromedp.WaitVisible(chromedp.CSS(activeSel(root.ID))))
		tb.click("fork from turn 2", forkFromHereSel(rootTurns[1].ID))
		tb.forkInDialog()
		jwt := tb.waitActiveOther(root.ID)
		say(jwt, "Use JWTs instead of cookies")

		tb.click("back to the parent", `[data-testid="parent-indicator"]`)
		tb.run("the parent", chromedp.WaitVisible(chromedp.CSS(activeSel(root.ID))))
		for i, child := range []string{oauth, jwt} {
			tb.waitJS(fmt.Sprintf("the marker on turn %d", i+1), fmt.Sprintf(`[...document.querySelectorAll('%s [data-testid="fork-marker"] a')].some((a) => a.getAttribute("href").includes(%q))`,
				turnSel(rootTurns[i].ID), child))
		}
		tb.screenshot("gui-fork-markers.png")

		tb.click("the JWT branch", sessionItemSel(jwt))
		tb.run("the JWT branch", chromedp.WaitVisible(chromedp.CSS(activeSel(jwt))))
		tb.click("compare", `[data-testid="compare"]`)
		tb.waitJS("the picker", `!!document.querySelector('[data-testid="compare-with"]')`)
		tb.eval(fmt.Sprintf(`(() => { const s = document.querySelector('[data-testid="compare-with"]');
		  s.value = %q; s.dispatchEvent(new Event("change", { bubbles: true })); return s.value; })()`, oauth), new(string))
		tb.click("show side by side", `[data-testid="compare-go"]`)
		tb.run("the comparison", chromedp.WaitVisible(chromedp.CSS(`[data-testid="comparison"]`)))
		var cmp struct {
			Shared string
			A, B   []string
		}
		tb.eval(`(() => { const c = document.querySelector('[data-testid="comparison"]');
		  const texts = (sel) => [...c.querySelectorAll(sel + ' [data-testid="message"][data-role="user"]')].map((m) => m.textContent);
		  return { shared: c.querySelector('[data-testid="shared-prefix"]').dataset.count,
		    a: texts('[data-testid="compare-a"]'), b: texts('[data-testid="compare-b"]') }; })()`, &cmp)
		if cmp.Shared != "1" || len(cmp.A) != 2 || !strings.Contains(cmp.A[1], "Use JWTs") || len(cmp.B) != 1 || !strings.Contains(cmp.B[0], "Use OAuth") {
			t.Errorf("comparison = %+v", cmp)
		}
		tb.screenshot("gui-compare.png")

		tb.click("the OAuth branch", sessionItemSel(oauth))
		tb.run("the OAuth branch", chromedp.WaitVisible(chromedp.CSS(activeSel(oauth))))
		tb.screenshot("gui-tree.png")
		tb.click("archive", `[data-testid="archive"]`)
		tb.waitJS("the OAuth branch left the tree", fmt.Sprintf(`!document.querySelector('%s') && !!document.querySelector('%s')`, sessionItemSel(oauth), sessionItemSel(jwt)))
		tb.noError()
	})

	// Every kind of item readable: a command with its output, a file change
	// as a diff.
	t.Run("CommandAndFileChangeReadable", func(t *testing.T) {
		_, tb, _, parentID, _ := setup(t, "hello")
		tb.run("type and send",
			chromedp.SendKeys(chromedp.CSS(`[data-testid="composer-input"]`), itemsPrompt),
			chromedp.Click(chromedp.CSS(`[data-testid="send"]`)),
		)
		tb.waitJS("the command with its output and the diff", fmt.Sprintf(`(() => {
		  const s = document.querySelector(%q);
		  if (!s || s.dataset.status !== "READY") return false;
		  const cmd = [...s.querySelectorAll('[data-testid="message"][data-kind="commandExecution"]')]
		    .find((m) => m.textContent.includes("echo gui-items-7"));
		  const out = cmd && cmd.querySelector('[data-testid="command-output"]');
		  const diff = s.querySelector('[data-testid="message"][data-kind="fileChange"] pre.diff');
		  return !!out && out.textContent.includes("gui-items-7") && !!diff && diff.textContent.includes("hello from the patch")
		    && s.querySelector('[data-testid="message"][data-kind="fileChange"]').textContent.includes("notes.txt");
		})()`, activeSel(parentID)))
		tb.screenshot("items.png")
		tb.noError()
	})

	// A page open when its stored token goes away (tuttid restarted with
	// another token, the storage cleared) says how to sign in, and signing
	// in there comes back to the same view.
	t.Run("SignInAgainFromThePage", func(t *testing.T) {
		h, tb, _, parentID, _ := setup(t, "turn one")
		if h.token == "" {
			t.Skip("the harness runs without a token")
		}
		var cleared bool
		tb.eval(`(localStorage.removeItem("tuttid-token"), true)`, &cleared)
		tb.click("fork conversation", `[data-testid="fork-conversation"]`)
		tb.forkInDialog()
		tb.run("the sign-in page", chromedp.WaitVisible(chromedp.CSS(`[data-testid="sign-in"]`)))
		var text string
		tb.eval(`document.body.innerText`, &text)
		if strings.Contains(text, "Build login") || !strings.Contains(text, "token") {
			tb.fail("the sign-in page shows %q", text)
		}
		tb.run("type the token",
			chromedp.SendKeys(chromedp.CSS(`[data-testid="sign-in"] input`), h.token),
			chromedp.Click(chromedp.CSS(`[data-testid="sign-in"] button[type="submit"]`)))
		tb.run("back to the same session", chromedp.WaitVisible(chromedp.CSS(activeSel(parentID))))
		var href string
		tb.eval(`location.href`, &href)
		if strings.Contains(href, "token=") {
			t.Errorf("the token stays in the address: %s", href)
		}
		tb.noError()
	})
}
