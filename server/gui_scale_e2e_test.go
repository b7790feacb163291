package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"tuttid/activity"
	"tuttid/agent"
	"tuttid/agent/agenttest"
	"tuttid/ent"
	"tuttid/store"
)

// TestGUIScale measures the GUI on a workspace of 1,000 sessions against
// the same actions on one of 10, in the same run and the same browser
// (issue 26): the first render of the tree, expanding the widest branch,
// switching sessions, and a burst of 1,000 activity events. Times come from
// the page's performance.now() (from the action to the frame after the DOM
// shows its result), blocking from PerformanceObserver "longtask" entries.
// Targets: each large figure at most scaleRatio times the small one, and no
// long task over maxLongTask during any action (see measureScale for how a
// loaded machine is told from the page). The burst is real: renames
// through the GraphQL API, published by the server's broker.
//
//	go test -count=1 -run TestGUIScale -v ./server/
func TestGUIScale(t *testing.T) {
	browser := startBrowser(t)
	dbPath := filepath.Join(t.TempDir(), "tuttid.db")
	small := seedScaleWorkspace(t, dbPath, "small", scaleShape{fan: 4, chain: 5, total: 10})
	large := seedScaleWorkspace(t, dbPath, "large", scaleShape{fan: 200, chain: 50, total: 1000})
	h := startServer(t, harnessOpts{runtime: agenttest.Idle(), dbPath: dbPath})
	tb := openTab(t, browser, guiServer(t, h))
	tb.run("install the measuring script", chromedp.Action[chromedp.Void](func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: scalePerfScript})
		return chromedp.Void{}, err
	}))

	// The ARIA tree at 1,000 sessions: every session a treeitem in the
	// page, with its level and its place among its siblings.
	scaleFirstRender(tb, large)
	var aria struct {
		Items                 int
		Deepest, Fan, LastKid []string
		Selected              []string
		ExpandedRoot          string
	}
	tb.eval(fmt.Sprintf(`(() => {
	  const attrs = (id) => { const e = document.querySelector('[role="treeitem"][data-session-id="' + id + '"]');
	    return ["aria-level", "aria-setsize", "aria-posinset"].map((a) => e.getAttribute(a)); };
	  return { items: document.querySelectorAll('[role="tree"] [role="treeitem"]').length,
	    deepest: attrs(%q), fan: attrs(%q), lastKid: attrs(%q),
	    selected: [...document.querySelectorAll('[role="treeitem"][aria-selected="true"]')].map((e) => e.dataset.sessionId),
	    expandedRoot: document.querySelector('[role="treeitem"][data-session-id=%q]').getAttribute("aria-expanded") };
	})()`, large.deepest, large.fanKids[0], large.fanKids[199], large.fanRoot), &aria)
	if aria.Items != 1000 || !slices.Equal(aria.Deepest, []string{"50", "1", "1"}) || !slices.Equal(aria.Fan, []string{"2", "200", "1"}) ||
		!slices.Equal(aria.LastKid, []string{"2", "200", "200"}) || !slices.Equal(aria.Selected, []string{large.deepest}) || aria.ExpandedRoot != "true" {
		t.Errorf("the tree of 1,000 sessions: %+v", aria)
	}

	// The machine may be shared: a run whose figures miss a target is
	// measured again, up to scaleAttempts runs within scaleBudget; each
	// run's table is logged.
	var problems []string
	began := time.Now()
	for attempt := 1; attempt <= scaleAttempts && (attempt == 1 || time.Since(began) < scaleBudget); attempt++ {
		problems = measureScale(t, h, tb, small, large, attempt)
		if len(problems) == 0 {
			return
		}
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// The actions, in the order of the table.
var scaleActions = []string{"first render", "expand widest branch", "switch session", "1,000-event burst", "burst: shown after the last event"}

// measureScale runs every action on both workspaces, logs the table and
// returns the targets missed.
func measureScale(t *testing.T, h *harness, tb *tab, small, large scaleWorkspace, attempt int) []string {
	t.Helper()
	figures := map[string]map[string][]scaleSample{"small": {}, "large": {}}
	// A sample with a long task over the target is measured again, up to
	// scaleRepeats times, and the last counts: on a loaded machine the OS
	// preempting the page mid-task makes sporadic long tasks (10-session
	// samples get them too); one the page's own work makes comes back
	// every time. So is a burst during which the server dropped the page's
	// subscription (its delivery fell behind): the page then reloads, and
	// the burst measures the reload, not the events.
	remeasured := map[string]map[string]int{"small": {}, "large": {}}
	var stale []string
	record := func(size, action string, measure func() scaleSample) scaleSample {
		s := measure()
		for range scaleRepeats {
			if longestTask([]scaleSample{s}) <= maxLongTask && !s.resynced {
				break
			}
			remeasured[size][action]++
			s = measure()
		}
		figures[size][action] = append(figures[size][action], s)
		return s
	}
	// Each action alternates the sizes, so a slow moment of the shared
	// machine falls on both.
	both := []struct {
		name string
		ws   scaleWorkspace
	}{{"small", small}, {"large", large}}
	for range 3 {
		for _, w := range both {
			record(w.name, "first render", func() scaleSample { return scaleFirstRender(tb, w.ws) })
		}
	}
	for _, w := range both {
		scaleFirstRender(tb, w.ws)
		for range 7 {
			record(w.name, "expand widest branch", func() scaleSample { return scaleExpand(tb, w.ws) })
		}
		for i := range 7 {
			record(w.name, "switch session", func() scaleSample { return scaleSwitch(tb, w.ws.fanKids[i%2]) })
		}
		b := record(w.name, "1,000-event burst", func() scaleSample { return scaleBurst(t, h, tb, w.ws, 1000) })
		figures[w.name]["burst: shown after the last event"] = []scaleSample{{ms: b.lagMs, longTasks: b.longTasks, resynced: b.resynced}}
		if b.stale {
			stale = append(stale, fmt.Sprintf("after a burst on %d sessions the page no longer showed renames", len(w.ws.ids)))
		}
		tb.noError()
	}

	t.Logf("run %d: %-33s %12s %12s %7s %14s %14s %11s", attempt, "action (median)", "10 sessions", "1,000", "ratio", "longest task", "(10 sessions)", "re-measured")
	problems := stale
	for _, action := range scaleActions {
		s, l := figures["small"][action], figures["large"][action]
		sm, lm := medianMs(s), medianMs(l)
		// A result shows at a frame at the earliest: a figure under one
		// frame is counted as one.
		ratio := max(lm, frameMs) / max(sm, frameMs)
		lt, st := longestTask(l), longestTask(s)
		t.Logf("run %d: %-33s %9.1f ms %9.1f ms %7.2f %11.1f ms %11.1f ms %7d, %d", attempt, action, sm, lm, ratio, lt, st,
			remeasured["small"][action], remeasured["large"][action])
		resynced := slices.ContainsFunc(append(slices.Clone(s), l...), func(x scaleSample) bool { return x.resynced })
		if resynced && action == "burst: shown after the last event" {
			// After a drop the last event reaches the page through the
			// reload its new subscription makes: not comparable.
			t.Logf("run %d: %s: the server dropped the page's subscription in every repeat; not compared", attempt, action)
		} else if ratio > scaleRatio {
			problems = append(problems, fmt.Sprintf("%s: %.1f ms at 1,000 sessions is %.2fx the %.1f ms at 10 (at most %vx)", action, lm, ratio, sm, scaleRatio))
		}
		// The page of 10 sessions does no work that grows with the
		// workspace: when it blocks over the bound too (after its repeats),
		// the machine is too loaded for the bound to say anything about the
		// page, and the 1,000-session page is held to scaleRatio times it.
		limit := maxLongTask
		if st > maxLongTask {
			limit = st * scaleRatio
			t.Logf("run %d: %s: the 10-session page blocked for %.1f ms itself (a loaded machine): the 1,000-session page is held to %.1f ms",
				attempt, action, st, limit)
		}
		if lt > limit {
			problems = append(problems, fmt.Sprintf("%s: a long task of %.1f ms at 1,000 sessions (10 sessions: %.1f ms) blocks input over %.0f ms", action, lt, st, limit))
		}
	}
	t.Logf("run %d: 1,000 renames sent in %.0f ms (10 sessions) and %.0f ms (1,000)", attempt,
		figures["small"]["1,000-event burst"][0].sendMs, figures["large"]["1,000-event burst"][0].sendMs)
	if len(problems) > 0 {
		t.Logf("run %d missed: %q; samples: %+v", attempt, problems, figures)
	}
	return problems
}

// The targets of issue 26.
const (
	scaleRatio  = 3.0
	maxLongTask = 100.0 // ms
	// frameMs is one frame at 60 Hz.
	frameMs       = 1000.0 / 60
	scaleAttempts = 3
	scaleRepeats  = 2
	// scaleBudget: no new run starts after this long.
	scaleBudget = 70 * time.Second
)

// scaleShape is a seeded workspace: a root with fan forks (the widest
// branch), a chain of chain sessions (the deepest tree), and the rest in
// trees of up to 75 sessions, each a 4-ary tree of forks.
type scaleShape struct{ fan, chain, total int }

type scaleWorkspace struct {
	id      string
	fanRoot string
	fanKids []string
	deepest string // the chain's last session: shown at first render
	ids     []string
}

// seedScaleWorkspace writes a workspace's sessions and lineage rows into
// the database at dbPath before the server opens it: forking 1,000
// sessions through Codex would take minutes, and the server reads these
// rows as it reads any others.
func seedScaleWorkspace(t *testing.T, dbPath, name string, shape scaleShape) scaleWorkspace {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ws := scaleWorkspace{id: "ws-" + name}
	if err := st.Client.Workspace.Create().SetID(ws.id).SetName(name).SetRootPath(t.TempDir()).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	type row struct{ id, parent string }
	var rows []row
	add := func(parent string) string {
		id := fmt.Sprintf("%s-%04d", name, len(rows))
		rows = append(rows, row{id, parent})
		ws.ids = append(ws.ids, id)
		return id
	}
	ws.fanRoot = add("")
	for range shape.fan {
		ws.fanKids = append(ws.fanKids, add(ws.fanRoot))
	}
	prev := ""
	for range shape.chain {
		prev = add(prev)
	}
	ws.deepest = prev
	for len(rows) < shape.total {
		var tree []string
		for i := 0; i < 75 && len(rows) < shape.total; i++ {
			parent := ""
			if i > 0 {
				parent = tree[(i-1)/4]
			}
			tree = append(tree, add(parent))
		}
	}
	start := time.Now().Add(-time.Hour)
	const chunk = 500 // SQLite bounds a statement's parameters
	for lo := 0; lo < len(rows); lo += chunk {
		part := rows[lo:min(lo+chunk, len(rows))]
		sessions := make([]*ent.AgentSessionCreate, len(part))
		var forks []*ent.SessionForkCreate
		for i, r := range part {
			at := start.Add(time.Duration(lo+i) * time.Millisecond)
			sessions[i] = st.Client.AgentSession.Create().SetID(r.id).SetWorkspaceID(ws.id).
				SetTitle(fmt.Sprintf("Session %d of %s", lo+i, name)).
				SetProvider(agent.ProviderCodex).SetProviderSessionID("thread-" + r.id).
				SetSettings(agent.ComposerSettings{}).SetCreatedAt(at).SetUpdatedAt(at)
			if r.parent != "" {
				forks = append(forks, st.Client.SessionFork.Create().SetWorkspaceID(ws.id).
					SetParentAgentSessionID(r.parent).SetChildAgentSessionID(r.id).
					SetParentProviderSessionID("thread-"+r.parent).SetChildProviderSessionID("thread-"+r.id).
					SetProvider(agent.ProviderCodex).SetForkRequestID("req-"+r.id).SetForkedAtUnixMs(at.UnixMilli()))
			}
		}
		if err := st.Client.AgentSession.CreateBulk(sessions...).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if len(forks) > 0 {
			if err := st.Client.SessionFork.CreateBulk(forks...).Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	return ws
}

// scaleSample is one measured action: ms from its start to the frame
// after the page showed its result, the long tasks that overlapped it,
// and for a burst how long sending took and how long after the last event
// reached the page (its WebSocket message) the page showed it: the page's
// part, without the server's delivery (when a resync replaced the event,
// from its answer).
type scaleSample struct {
	ms        float64
	longTasks []float64
	sendMs    float64
	lagMs     float64
	// stale: after the burst the page no longer showed the workspace's
	// changes; resynced: the server dropped the page's subscription during
	// it.
	stale, resynced bool
}

// scalePerfScript runs before the page's own: it records long tasks from
// the start, and window.__perf.until(pred) resolves with the time pred
// first held (checked on every DOM change) and the time of the frame
// after it (the result painted).
const scalePerfScript = `window.__perf = { longTasks: [] };
try {
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__perf.longTasks.push({ start: e.startTime, dur: e.duration });
  }).observe({ type: "longtask", buffered: true });
} catch (e) {}
// Each WebSocket message's arrival, to tell the server's delivery from
// the page's work: __perf.arrived(text) is when the first message holding
// text arrived.
window.__perf.messages = [];
const NativeWebSocket = window.WebSocket;
window.WebSocket = class extends NativeWebSocket {
  constructor(...args) {
    super(...args);
    this.addEventListener("message", (e) => window.__perf.messages.push({ at: performance.now(), data: String(e.data) }));
  }
};
window.__perf.arrived = (text) => (window.__perf.messages.find((m) => m.data.includes(text)) || {}).at;
window.__perf.until = (pred) => new Promise((resolve) => {
  const hit = () => {
    let ok = false;
    try { ok = !!pred(); } catch (e) {}
    if (!ok) return false;
    const dom = performance.now();
    requestAnimationFrame(() => setTimeout(() => resolve({ dom, painted: performance.now() }), 0));
    return true;
  };
  if (hit()) return;
  const mo = new MutationObserver(() => { if (hit()) mo.disconnect(); });
  mo.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
});
// The first render: the tree shows the selected session.
window.__perf.first = window.__perf.until(() => document.querySelector('[role="treeitem"][aria-selected="true"]'));
// measure runs act (a function) at the start of a frame and resolves once
// pred holds, with the time taken and the long tasks meanwhile (read a
// moment later: the observer reports a task after it ends).
window.__perf.measure = (act, pred) => new Promise((resolve) => {
  requestAnimationFrame(async () => {
    const t0 = performance.now();
    act();
    const r = await window.__perf.until(pred);
    setTimeout(() => resolve({ ms: r.painted - t0,
      longTasks: window.__perf.longTasks.filter((e) => e.start + e.dur > t0 && e.start < r.painted).map((e) => e.dur) }), 150);
  });
});
// treeItem finds a session's treeitem, scrolling the tree's scroller
// until it is rendered (a virtualized tree renders only what is in view).
window.__perf.reveal = async (id) => {
  const sel = '[role="treeitem"][data-session-id="' + id + '"]';
  const tree = document.querySelector('[role="tree"]');
  let sc = tree;
  while (sc && sc !== document.body && !(sc.scrollHeight > sc.clientHeight && getComputedStyle(sc).overflowY !== "visible")) sc = sc.parentElement;
  const frame = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  let el = document.querySelector(sel);
  if (!el && sc && sc !== document.body) {
    for (let top = 0; top <= sc.scrollHeight && !el; top += Math.max(50, sc.clientHeight / 2)) {
      sc.scrollTop = top;
      await frame();
      el = document.querySelector(sel);
    }
  }
  if (!el) return false;
  el.scrollIntoView({ block: "center" });
  await frame();
  return true;
};`

// scaleFirstRender loads the GUI on the workspace, showing the chain's
// deepest session: from the navigation to the frame after the tree shows
// that session selected.
func scaleFirstRender(tb *tab, ws scaleWorkspace) scaleSample {
	tb.t.Helper()
	tb.run("blank page", chromedp.Navigate("about:blank"))
	tb.run("load the GUI on "+ws.id,
		chromedp.Navigate(tb.url+"/app/#w="+ws.id+"&s="+ws.deepest),
		chromedp.WaitVisible(chromedp.CSS(activeSel(ws.deepest))),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="connection"][data-state="live"]`)),
	)
	var s struct {
		Ms        float64
		LongTasks []float64
	}
	tb.evalAsync(`(async () => {
	  const r = await window.__perf.first;
	  await new Promise((res) => setTimeout(res, 150));
	  return { ms: r.painted, longTasks: window.__perf.longTasks.filter((e) => e.start < r.painted).map((e) => e.dur) };
	})()`, &s)
	return scaleSample{ms: s.Ms, longTasks: s.LongTasks}
}

// scaleExpand collapses the widest branch, then measures expanding it
// again: from the click on its twisty to the frame after its first fork is
// shown.
func scaleExpand(tb *tab, ws scaleWorkspace) scaleSample {
	tb.t.Helper()
	item := fmt.Sprintf(`document.querySelector('[role="treeitem"][data-session-id=%q]')`, ws.fanRoot)
	twisty := item + `.querySelector(":scope > .tree-row .tree-twisty")`
	first := fmt.Sprintf(`document.querySelector('[role="treeitem"][data-session-id=%q]')`, ws.fanKids[0])
	var ok bool
	tb.evalAsync(fmt.Sprintf(`window.__perf.reveal(%q)`, ws.fanRoot), &ok)
	if !ok {
		tb.fail("the widest branch's root is not in the tree")
	}
	tb.eval(twisty+`.click(), true`, &ok)
	tb.waitJS("the widest branch collapsed", item+`.getAttribute("aria-expanded") === "false" && !(`+first+` && `+first+`.checkVisibility())`)
	var s struct {
		Ms        float64
		LongTasks []float64
	}
	tb.evalAsync(fmt.Sprintf(`window.__perf.measure(() => %s.click(), () => %s.getAttribute("aria-expanded") === "true" && %s && %s.checkVisibility())`,
		twisty, item, first, first), &s)
	return scaleSample{ms: s.Ms, longTasks: s.LongTasks}
}

// scaleSwitch clicks a session's treeitem and measures until the page
// shows it (its header and its item selected).
func scaleSwitch(tb *tab, id string) scaleSample {
	tb.t.Helper()
	var ok bool
	tb.evalAsync(fmt.Sprintf(`window.__perf.reveal(%q)`, id), &ok)
	if !ok {
		tb.fail("session %s is not in the tree", id)
	}
	var s struct {
		Ms        float64
		LongTasks []float64
	}
	tb.evalAsync(fmt.Sprintf(`window.__perf.measure(
	  () => document.querySelector('[role="treeitem"][data-session-id=%q]').click(),
	  () => document.querySelector('%s') && document.querySelector('[role="treeitem"][aria-selected="true"][data-session-id=%q]'))`,
		id, activeSel(id), id), &s)
	return scaleSample{ms: s.Ms, longTasks: s.LongTasks}
}

// scaleBurst renames sessions n times through the GraphQL API (each a
// real updateSession, published as SESSION_UPDATED), spread over the
// workspace's sessions, 8 at a time; the last rename, sent after all
// others were answered, names the session shown. Measured from the first
// rename sent to the frame after the shown session's treeitem shows the
// last title.
func scaleBurst(t *testing.T, h *harness, tb *tab, ws scaleWorkspace, n int) scaleSample {
	t.Helper()
	shown := tb.activeID()
	// Titles unique to this burst: renaming to the same title changes
	// nothing and publishes nothing.
	nonce := time.Now().UnixNano()
	final := fmt.Sprintf("burst done %d", nonce)
	tb.eval(fmt.Sprintf(`(window.__perf.burst = window.__perf.until(() => {
	  const e = document.querySelector('[role="treeitem"][data-session-id=%q] .tree-title');
	  return e && e.textContent === %q;
	}), window.__perf.burstFinal = %q, window.__perf.burstStart = performance.now(), true)`, shown, final, final), new(bool))
	rename := func(id, title string) error {
		body, _ := json.Marshal(map[string]any{
			"query":     `mutation($in: UpdateSessionInput!) { updateSession(input: $in) { id } }`,
			"variables": map[string]any{"in": map[string]any{"workspaceId": ws.id, "agentSessionId": id, "title": title}},
		})
		resp, err := http.Post(h.url+"/query", "application/json", bytes.NewReader(body))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var r struct{ Errors []gqlError }
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || len(r.Errors) > 0 {
			return fmt.Errorf("rename %s: %v %+v", id, err, r.Errors)
		}
		return nil
	}
	began := time.Now()
	jobs := make(chan int)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				id := ws.ids[i%len(ws.ids)]
				if err := rename(id, fmt.Sprintf("Burst %d (%d)", i, nonce)); err != nil {
					errs <- err
				}
			}
		}()
	}
	for i := range n - 1 {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if err := rename(shown, final); err != nil {
		errs <- err
	}
	sent := time.Since(began)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var s struct {
		Ms, Lag                         float64
		ArrivedAfter, ShownAfterArrival float64
		Events, Resyncs, Queries        int
		Never                           bool
		LongTasks                       []float64
	}
	tb.evalAsync(`(async () => {
	  const answered = performance.now();
	  // A page that stopped following never shows the last title.
	  const r = await Promise.race([window.__perf.burst,
	    new Promise((res) => setTimeout(() => res({ painted: performance.now(), never: true }), 10000))]);
	  await new Promise((res) => setTimeout(res, 150));
	  const t0 = window.__perf.burstStart;
	  const arrived = window.__perf.arrived(JSON.stringify(window.__perf.burstFinal));
	  const events = window.__perf.messages.filter((m) => m.at >= t0 && m.data.includes('"activity"')).length;
	  const resyncs = window.__perf.messages.filter((m) => m.at >= t0 && m.data.includes("RESYNC_REQUIRED")).length;
	  const queries = performance.getEntriesByType("resource").filter((e) => e.startTime >= t0 && e.name.includes("/query")).length;
	  return { ms: r.painted - t0, lag: Math.max(0, r.painted - (arrived === undefined ? answered : arrived)), arrivedAfter: arrived - answered, shownAfterArrival: r.painted - arrived,
	    events, resyncs, queries, never: !!r.never,
	    longTasks: window.__perf.longTasks.filter((e) => e.start + e.dur > t0 && e.start < r.painted).map((e) => e.dur) };
	})()`, &s)
	// Still live: a rename after the burst shows (a subscription the
	// server dropped for falling behind is made again).
	after := final + " and after"
	if err := rename(shown, after); err != nil {
		t.Fatal(err)
	}
	var live bool
	tb.evalAsync(fmt.Sprintf(`new Promise((resolve) => {
	  const shows = () => { const e = document.querySelector('[role="treeitem"][data-session-id=%q] .tree-title');
	    return !!e && e.textContent === %q; };
	  window.__perf.until(shows).then(() => resolve(true));
	  setTimeout(() => resolve(shows()), 10000);
	})`, shown, after), &live)
	t.Logf("%s burst: %d events and %d resyncs received, %d requests to /query; the last event arrived %.1f ms after it was answered, shown %.1f ms after it arrived; its last title shown: %v; a rename after it shown: %v",
		ws.id, s.Events, s.Resyncs, s.Queries, s.ArrivedAfter, s.ShownAfterArrival, !s.Never, live)
	return scaleSample{ms: s.Ms, longTasks: s.LongTasks, sendMs: float64(sent.Microseconds()) / 1000, lagMs: s.Lag, stale: !live || s.Never, resynced: s.Resyncs > 0}
}

// evalAsync evaluates an expression whose value is a promise and decodes
// what it resolves to into out.
func (tb *tab) evalAsync(expr string, out any) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, guiWait)
	defer cancel()
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](expr, chromedp.EvalAwaitPromise))
	if err == nil {
		err = json.Unmarshal(raw, out)
	}
	if err != nil {
		tb.fail("evaluate %s: %v", expr, err)
	}
}

func medianMs(ss []scaleSample) float64 {
	if len(ss) == 0 {
		return 0
	}
	ms := make([]float64, len(ss))
	for i, s := range ss {
		ms[i] = s.ms
	}
	slices.Sort(ms)
	return ms[len(ms)/2]
}

func longestTask(ss []scaleSample) float64 {
	longest := 0.0
	for _, s := range ss {
		for _, d := range s.longTasks {
			longest = max(longest, d)
		}
	}
	return longest
}

// TestGUIFollowsAfterADrop: a subscriber that falls behind a burst is
// dropped by the broker (RESYNC_REQUIRED, then the subscription ends); the
// page subscribes again and keeps following the workspace (before, it
// reloaded once and then showed no more changes until a reload).
func TestGUIFollowsAfterADrop(t *testing.T) {
	browser := startBrowser(t)
	dbPath := filepath.Join(t.TempDir(), "tuttid.db")
	ws := seedScaleWorkspace(t, dbPath, "small", scaleShape{fan: 4, chain: 5, total: 10})
	h := startServer(t, harnessOpts{runtime: agenttest.Idle(), dbPath: dbPath})
	tb := openTab(t, browser, guiServer(t, h))
	tb.run("install the measuring script", chromedp.Action[chromedp.Void](func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: scalePerfScript})
		return chromedp.Void{}, err
	}))
	tb.run("blank page", chromedp.Navigate("about:blank")) // a new document runs the script
	tb.open(ws.id, ws.deepest)
	// Far more events at once than a subscriber may lag behind: deltas of
	// a session not shown, which the page ignores.
	for i := range 20000 {
		h.srv.Broker.Publish(t.Context(), activity.Event{Kind: activity.MessageDelta, WorkspaceID: ws.id,
			AgentSessionID: ws.fanKids[0], ItemID: "item", Delta: fmt.Sprint(i)})
	}
	tb.waitJS("the drop reaching the page", `window.__perf.messages.some((m) => m.data.includes("RESYNC_REQUIRED"))`)
	var out struct{ UpdateSession struct{ ID string } }
	h.must(`mutation($in: UpdateSessionInput!) { updateSession(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws.id, "agentSessionId": ws.deepest, "title": "renamed after the drop"}}, &out)
	tb.waitJS("the rename after the drop", fmt.Sprintf(`(() => {
	  const e = document.querySelector('[role="treeitem"][data-session-id=%q] .tree-title');
	  return !!e && e.textContent === "renamed after the drop"; })()`, ws.deepest))
	tb.run("live again", chromedp.WaitVisible(chromedp.CSS(`[data-testid="connection"][data-state="live"]`)))
	tb.noError()
}
