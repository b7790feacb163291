package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"tuttid/agent/agenttest"
	"tuttid/benchtest"
	"tuttid/graph"
)

// costCase is a request made of as many aliases of one field as the
// complexity limit allows.
type costCase struct {
	name string
	// alias is the i-th alias's field with its selection.
	alias func(i int) string
	// cold: the worktrees' changed files are read again (their 2 s cache
	// has expired), as for a request that reaches many branches at once.
	cold bool
}

// BenchmarkComplexityLimit is the worst request at the complexity limit:
// for each of the fields that read the most (an exploration as the GUI
// shows it, its ranking, a session's explorations, every check's output,
// a session's changes with their patch, its git branch, pages of large
// messages and of turns, the GUI's list of sessions), one request of
// as many aliases as the limit allows, on the largest data the API lists
// (20 explorations of 8 branches, each branch a worktree of 1,000 files
// with 20 checks of 64 KiB of output, 500 sessions, a session of 64 KiB
// messages), the worktrees' caches cold. The baseline, in the same run:
// the limit spent on plain fields (pages of 500 sessions' scalars). The
// figures are tuttid's CPU (the process and the git it ran), the worst
// request's and the baseline's, and their ratio; the log has each
// request's. The limit's aim: the worst at about a second.
//
// TUTTID_BENCH_FILES sets the repository's files (1,000 by default).
func BenchmarkComplexityLimit(b *testing.B) {
	h := startServer(b, harnessOpts{runtime: agenttest.Idle()})
	start := time.Now()
	d := seedCostData(b, h, costSizes{explorations: 20, files: benchEnvInt("TUTTID_BENCH_FILES", 1_000), inherited: 100, own: 20,
		sessions: 500, largeTurns: 64})
	b.Logf("seeded in %v", time.Since(start).Round(time.Millisecond))
	gui, err := os.ReadFile("../web/ui/src/explore.graphql")
	if err != nil {
		b.Fatal(err)
	}
	xArgs := func(i int) string {
		return fmt.Sprintf(`workspaceId: %q, agentSessionId: %q, explorationId: %q`, d.ws, d.parent, d.explorations[i%len(d.explorations)])
	}
	branch := func(i int) string {
		return fmt.Sprintf(`session(workspaceId: %q, id: %q)`, d.ws, d.branches[i%len(d.branches)])
	}
	plain := costCase{name: "plain fields (baseline)", alias: func(int) string {
		return fmt.Sprintf(`workspace(id: %q) { sessions(first: 500) { edges { node { id workspaceId title status archived cwd provider providerSessionId createdAt updatedAt } } } }`, d.ws)
	}}
	cases := []costCase{
		{name: "the GUI's exploration view", cold: true, alias: func(i int) string { return `exploration(` + xArgs(i) + `) { ...ExplorationFields }` }},
		{name: "an exploration's ranking", cold: true, alias: func(i int) string { return `exploration(` + xArgs(i) + `) { ranking { name } }` }},
		{name: "a session's explorations ranked", cold: true, alias: func(int) string {
			return fmt.Sprintf(`session(workspaceId: %q, id: %q) { explorations { ranking { name } } }`, d.ws, d.parent)
		}},
		{name: "every check's output", alias: func(i int) string {
			return `exploration(` + xArgs(i) + `) { branches { checks { id state output } } }`
		}},
		{name: "a branch's changes with the patch", alias: func(i int) string { return branch(i) + ` { code { changes { files { path } patch } } }` }},
		{name: "a branch's git branch", alias: func(i int) string { return branch(i) + ` { code { branch } }` }},
		{name: "the GUI's list (50 worktrees a page)", cold: true, alias: func(int) string {
			return fmt.Sprintf(`workspace(id: %q) { sessions(first: 50) { edges { node { id title displayTitle status archived createdAt updatedAt parent { id } forkedFrom { lastTurnId forkedAtUnixMs } code { mode changes { files { path } } } } } } }`, d.ws)
		}},
		{name: "pages of 64 KiB messages", alias: func(int) string {
			return fmt.Sprintf(`session(workspaceId: %q, id: %q) { messages(first: 500) { edges { node { id text } } } }`, d.ws, d.large)
		}},
		{name: "pages of turns with their messages", alias: func(int) string {
			return fmt.Sprintf(`session(workspaceId: %q, id: %q) { turnConnection(last: 50) { edges { node { id messages { id text } } } } }`, d.ws, d.large)
		}},
	}
	// Each case's request: n aliases, n what the limit allows.
	requests := map[string]string{}
	build := func(c costCase) {
		one := "query Worst { a0: " + c.alias(0) + " }\n" + string(gui)
		cost, err := graph.Complexity(context.Background(), one, "Worst", nil)
		if err != nil {
			b.Fatalf("%s: %v", c.name, err)
		}
		n := graph.ComplexityLimit / cost
		if n == 0 {
			b.Logf("%-36s one alias alone costs %d: refused", c.name, cost)
			return
		}
		var q strings.Builder
		q.WriteString("query Worst {")
		for i := range n {
			fmt.Fprintf(&q, " a%d: %s", i, c.alias(i))
		}
		q.WriteString(" }\n")
		q.Write(gui)
		total, err := graph.Complexity(context.Background(), q.String(), "Worst", nil)
		if err != nil {
			b.Fatalf("%s: %v", c.name, err)
		}
		b.Logf("%-36s %3d aliases, complexity %6d", c.name, n, total)
		requests[c.name] = q.String()
	}
	build(plain)
	for _, c := range cases {
		build(c)
	}
	cpu := map[string][]time.Duration{}
	for b.Loop() {
		for _, c := range append([]costCase{plain}, cases...) {
			if requests[c.name] == "" {
				continue
			}
			b.StopTimer()
			if c.cold {
				time.Sleep(2100 * time.Millisecond) // codebranch's changesFresh
			}
			runtime.GC() // the previous request's garbage is not this one's
			b.StartTimer()
			took, size := costRequest(b, h, requests[c.name])
			cpu[c.name] = append(cpu[c.name], took)
			b.Logf("%-36s cpu %6.0f ms, answer %5.1f MB", c.name, float64(took.Microseconds())/1000, float64(size)/1e6)
		}
	}
	var worst string
	for _, c := range cases {
		if requests[c.name] == "" {
			continue
		}
		if worst == "" || benchtest.Median(cpu[c.name]) > benchtest.Median(cpu[worst]) {
			worst = c.name
		}
	}
	wm, pm := benchtest.Median(cpu[worst]), benchtest.Median(cpu[plain.name])
	b.Logf("worst: %s, %v (median); baseline %v", worst, wm.Round(time.Millisecond), pm.Round(time.Millisecond))
	b.ReportMetric(float64(wm.Milliseconds()), "worst-cpu-ms")
	b.ReportMetric(float64(pm.Milliseconds()), "baseline-cpu-ms")
	b.ReportMetric(float64(wm)/float64(pm), "worst/baseline")
}

// costRequest posts query and answers the CPU tuttid used for it and the
// answer's size; the answer is read but not decoded (a client's work, not
// tuttid's). It fails on any error in the answer.
func costRequest(tb testing.TB, h *harness, query string) (time.Duration, int64) {
	tb.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "operationName": "Worst"})
	before := cpuTime()
	resp, err := http.Post(h.url+"/query", "application/json", bytes.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	var head bytes.Buffer
	n, err := io.Copy(io.MultiWriter(&limitedWriter{w: &head, n: 4096}, io.Discard), resp.Body)
	resp.Body.Close()
	took := cpuTime() - before
	if err != nil {
		tb.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || bytes.Contains(head.Bytes(), []byte(`"errors"`)) {
		tb.Fatalf("%d: %s", resp.StatusCode, head.Bytes())
	}
	return took, n
}

// limitedWriter keeps the first n bytes written.
type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(l.n, len(p))
		l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}
