package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"tuttid/codex/codextest"
	"tuttid/instance"
)

// TestInstancesGUIWalkthrough is issue 25's "Done when" on real processes:
// two tuttid instances (a, b) on one PostgreSQL, each with its own Codex,
// the GUI open on b. A session started on a through a's GraphQL streams
// its turn on b's page; a fork from b's page is carried out on a (the
// child's owner is a) and the child is seen on both; a stopped, b's page
// says which sessions are unavailable and why, with Send, Fork and Fork from here
// disabled; a started again, the page clears and a message sent from b's
// page is carried out by a.
func TestInstancesGUIWalkthrough(t *testing.T) {
	chromium := os.Getenv("TUTTID_CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("chromium not found at %s", chromium)
		}
		t.Skipf("skipping: chromium not found at %s", chromium)
	}
	c := newCluster(t)
	const first, rest = "Streaming the first words", " and the rest of the reply."
	c.model.SetReply(func(req codextest.Request) codextest.Reply {
		if strings.HasPrefix(req.LastUserText(), "stream") {
			return codextest.Reply{Chunks: []string{first, rest}, Delay: 3 * time.Second}
		}
		return codextest.DefaultReply(req)
	})
	a, b := c.start("a"), c.start("b")
	ws := c.workspace(a)
	sa := c.session(a, ws, "on a") // through a's GraphQL
	if got := b.owner(ws, sa); got != "a" {
		t.Fatalf("the session's instance seen from b: %q, want a", got)
	}

	pg := openGUI(t, chromium, b.url)
	pg.run("open the session on b's page",
		chromedp.Navigate(b.url+"/app/#w="+ws+"&s="+sa),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`[data-testid="active-session"][data-session-id=%q]`, sa))),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="connection"][data-state="live"]`)),
	)

	// a's turn streams on b's page: its first words while it works, then
	// the whole reply.
	a.send(ws, sa, "stream it")
	pg.wait("the first words streaming on b's page while the session works", fmt.Sprintf(
		`document.body.innerText.includes(%q) && !document.body.innerText.includes(%q) &&
		 document.querySelector('[data-testid="active-session"]').dataset.status === "WORKING"`, first, strings.TrimSpace(rest)), 30*time.Second)
	pg.wait("the whole reply on b's page, the session ready", fmt.Sprintf(
		`document.body.innerText.includes(%q) && document.querySelector('[data-testid="active-session"]').dataset.status === "READY"`,
		strings.TrimSpace(rest)), 30*time.Second)

	// Fork from b's page: carried out on a.
	pg.click("Fork conversation", `[data-testid="fork-conversation"]`)
	pg.wait("the fork dialog", `!!document.querySelector('[role="dialog"][data-testid="fork-dialog"]')`, 10*time.Second)
	pg.click("Fork in the dialog", `[role="dialog"][data-testid="fork-dialog"] [data-testid="fork-dialog-submit"]`)
	pg.wait("the child shown", fmt.Sprintf(`(() => { const s = document.querySelector('[data-testid="active-session"]');
		return !!s && !!s.dataset.sessionId && s.dataset.sessionId !== %q; })()`, sa), 60*time.Second)
	var child string
	pg.eval(`document.querySelector('[data-testid="active-session"]').dataset.sessionId`, &child)
	if got := a.owner(ws, child); got != "a" {
		t.Errorf("the child's instance: %q, want a (the parent's owner)", got)
	}
	for _, p := range []*proc{a, b} {
		if kids := c.children(p, ws, sa); len(kids) != 1 || kids[0] != child {
			t.Errorf("%s lists the parent's children as %v, want [%s]", p.url, kids, child)
		}
	}
	pg.wait("the child in b's tree", fmt.Sprintf(`!!document.querySelector(%q)`, itemSel(child)), 10*time.Second)

	// a stops: b's page says which sessions are unavailable and why.
	a.kill()
	down := instance.DownAfter + 20*time.Second // a's last heartbeat may be 5 s old; the page polls every 5 s
	for _, id := range []string{sa, child} {
		pg.wait("session "+id+" unavailable in b's tree", fmt.Sprintf(
			`(() => { const i = document.querySelector(%q); const u = i && i.querySelector('[data-testid="unavailable"]');
			  return !!u && i.dataset.unavailable === "true" && u.dataset.reason.startsWith("instance a is down: last heartbeat"); })()`,
			itemSel(id)), down)
	}
	pg.wait("the header says why, Send, Fork and each Fork from here disabled with the reason", `(() => {
		const h = document.querySelector('.session-head [data-testid="unavailable"]');
		const send = document.querySelector('[data-testid="send"]'), fork = document.querySelector('[data-testid="fork-conversation"]');
		const here = [...document.querySelectorAll('[data-testid="fork-from-here"]')];
		return !!h && h.innerText.includes("instance a is down") && send.disabled && fork.disabled &&
		  send.title.includes("instance a is down") && fork.title.includes("instance a is down") &&
		  here.length > 0 && here.every((b) => b.disabled && b.title.includes("instance a is down")); })()`, 10*time.Second)
	var reason string
	pg.eval(`document.querySelector('.session-head [data-testid="unavailable"]').dataset.reason`, &reason)
	t.Logf("b's page while a is down: %q", reason)

	// a comes back: the page clears and goes on; the message sent from
	// b's page is carried out by a.
	a = c.start("a")
	pg.wait("the sessions available again", `document.querySelectorAll('[data-testid="unavailable"]').length === 0 &&
		!document.querySelector('[data-testid="send"]').disabled`, 30*time.Second)
	pg.run("type a message on b's page", chromedp.SendKeys(chromedp.CSS(`[data-testid="composer-input"]`), "go on"))
	pg.click("Send", `[data-testid="send"]`)
	pg.wait("a's reply on b's page", `document.body.innerText.includes("reply: go on") &&
		document.querySelector('[data-testid="active-session"]').dataset.status === "READY"`, 60*time.Second)
	last := a.session(ws, child)
	if n := len(last.Turns); n == 0 || last.Turns[n-1].Status != "COMPLETED" {
		t.Errorf("the child's last turn on a: %+v, want COMPLETED", last.Turns)
	}
	// The child's thread lives in a's Codex only: a completed turn on it
	// with the message is a's work, and b forwarded the send.
	found := false
	for _, r := range c.model.RequestsFor(last.ProviderSessionID) {
		if r.LastUserText() == "go on" {
			found = true
		}
	}
	if !found {
		t.Errorf("the model never got \"go on\" on the child's thread: the message was not carried out")
	}
	if n := strings.Count(b.logs(), `"forward: command carried out by its owner","instance":"a"`); n < 2 {
		t.Errorf("b forwarded %d commands to a, want the fork and the send", n)
	}
}

func itemSel(id string) string {
	return fmt.Sprintf(`[data-testid="session-item"][data-session-id=%q]`, id)
}

// gui is one headless Chromium tab signed in to a tuttid.
type gui struct {
	t   *testing.T
	ctx context.Context
}

func openGUI(t *testing.T, chromium, base string) *gui {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 860))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	// The first Run starts the browser: no timeout on its context.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	g := &gui{t: t, ctx: ctx}
	g.run("sign in with the token", chromedp.Navigate(base+"/app/?token="+testToken))
	return g
}

func (g *gui) run(what string, actions ...chromedp.Action[chromedp.Void]) {
	g.t.Helper()
	ctx, cancel := context.WithTimeout(g.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		g.fail("%s: %v", what, err)
	}
}

func (g *gui) eval(expr string, out *string) {
	g.t.Helper()
	ctx, cancel := context.WithTimeout(g.ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		g.fail("evaluate %s: %v", expr, err)
	}
	*out = v
}

func (g *gui) wait(what, expr string, d time.Duration) {
	g.t.Helper()
	ctx, cancel := context.WithTimeout(g.ctx, d+time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr,
		chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(d))); err != nil {
		g.fail("waiting %s for %s: %v", d, what, err)
	}
}

// click clicks sel once it is shown and enabled, finding and clicking in
// one evaluation (the list re-renders on every event).
func (g *gui) click(what, sel string) {
	g.t.Helper()
	g.wait("to click "+what, fmt.Sprintf(`(() => { const el = document.querySelector(%q);
		if (!el || el.disabled || el.getClientRects().length === 0) return false; el.click(); return true; })()`, sel), 20*time.Second)
}

func (g *gui) fail(format string, args ...any) {
	g.t.Helper()
	ctx, cancel := context.WithTimeout(g.ctx, 3*time.Second)
	defer cancel()
	text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	g.t.Fatalf("%s\n--- page text:\n%s", fmt.Sprintf(format, args...), text)
}
