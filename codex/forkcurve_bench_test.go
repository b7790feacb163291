package codex

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"tuttid/benchtest"
	"tuttid/codex/codextest"
	"tuttid/ent"
	"tuttid/fork"
)

// forkCurveEnv selects BenchmarkForkCurve's cases: unset runs the cheap
// ones only (what CI's `make bench` runs), "all" runs every one, else a
// comma-separated list of case names ("MB=80,turns=100"). -bench
// 'ForkCurve/MB=80' then picks among the selected ones.
const forkCurveEnv = "TUTTID_BENCH_FORK_CURVE"

// forkCurveCase is a parent: turns of replies of replyBytes each (0: the
// model server's default short reply).
type forkCurveCase struct {
	name       string
	turns      int
	replyBytes int
	cheap      bool // runs without the env (CI)
}

// forkCurveCases: history by size (5 MB replies, the large
// session; 1 MB is one reply of 1 MB) and by turns of small replies.
var forkCurveCases = []forkCurveCase{
	{name: "MB=1", turns: 1, replyBytes: 1 << 20, cheap: true},
	{name: "MB=10", turns: 2, replyBytes: 5 << 20},
	{name: "MB=40", turns: 8, replyBytes: 5 << 20},
	{name: "MB=80", turns: 16, replyBytes: 5 << 20},
	{name: "MB=160", turns: 32, replyBytes: 5 << 20},
	{name: "turns=10", turns: 10, cheap: true},
	{name: "turns=100", turns: 100},
	{name: "turns=1000", turns: 1000},
}

func forkCurveSelected(c forkCurveCase) bool {
	v := strings.TrimSpace(os.Getenv(forkCurveEnv))
	switch v {
	case "":
		return c.cheap
	case "all":
		return true
	}
	return slices.Contains(strings.Split(v, ","), c.name)
}

// BenchmarkForkCurve is issue 26's curve: for each parent (by bytes of
// history and by turns), tuttid's fork (the fork service end to end:
// journal, thread/fork, the child's history stored in one transaction)
// against a raw thread/fork returning the turns (decoded as a client
// would), on the same parent and app-server, alternating which goes first;
// b.N rounds (the parent is built once per case). It reports the medians and their ratio ("ratio",
// tuttid/raw), the per-round ratios' range, and the process's peak RSS
// (VmHWM, reset before each fork) during each, and store-ms, the median
// of tuttid's time from Codex's answer to the child's commit. Each case starts its own
// app-server.
//
//	TUTTID_BENCH_FORK_CURVE=all go test -run '^$' -bench ForkCurve -benchtime=3x -timeout 2h ./codex/
func BenchmarkForkCurve(b *testing.B) {
	outer := b
	for _, c := range forkCurveCases {
		// testing runs a benchmark once with b.N = 1 before b.N rounds:
		// the parent is built once, for both.
		var g *realRig
		var parent *ent.AgentSession
		var forks int // request ids, unique across both runs
		b.Run(c.name, func(b *testing.B) {
			if !forkCurveSelected(c) {
				b.Skipf("set %s=all (or =%s) to run it", forkCurveEnv, c.name)
			}
			if g == nil {
				g, parent = buildCurveParent(outliveTB{b, outer}, c)
			}
			benchForkCurve(b, c, g, parent, &forks)
		})
	}
}

// outliveTB is a sub-benchmark's TB whose cleanups and temp dirs belong
// to the outer benchmark, so that what it builds outlives the b.N = 1 run.
type outliveTB struct {
	testing.TB
	outer testing.TB
}

func (o outliveTB) Cleanup(f func()) { o.outer.Cleanup(f) }
func (o outliveTB) TempDir() string  { return o.outer.TempDir() }

func buildCurveParent(tb testing.TB, c forkCurveCase) (*realRig, *ent.AgentSession) {
	ctx := context.Background()
	model := codextest.StartModelServer(tb)
	model.SetLogf(nil)
	if c.replyBytes > 0 {
		model.SetReply(func(req codextest.Request) codextest.Reply {
			return codextest.Reply{Text: curveReply(req.LastUserText(), c.replyBytes), ChunkBytes: 64 << 10}
		})
	}
	g := startRealRig(tb, model, 10*time.Minute)
	built := time.Now()
	parent := benchParent(tb, ctx, g.sessions, 0)
	for i := 0; i < c.turns; i++ {
		sendTurns(tb, ctx, g.sessions, parent.ID, i, i+1)
		model.ForgetRequests() // each holds the whole conversation
	}
	tb.Logf("%s: parent of %d turns built in %s", c.name, c.turns, time.Since(built).Round(time.Millisecond))
	return g, parent
}

func benchForkCurve(b *testing.B, c forkCurveCase, g *realRig, parent *ent.AgentSession, forks *int) {
	ctx := context.Background()

	var tuttid, raw, stored []time.Duration
	var ratios []float64
	var tuttidPeak, rawPeak int64
	forkTuttid := func(i int) {
		resetPeakRSS(b)
		stop := startForkProfile(b, c.name, i)
		t0 := time.Now()
		*forks++
		res, err := g.forks.Fork(ctx, fork.Input{WorkspaceID: "w", ParentSessionID: parent.ID, RequestID: fmt.Sprintf("curve-%d", *forks)})
		if err != nil {
			b.Fatal(err)
		}
		tuttid = append(tuttid, time.Since(t0))
		stored = append(stored, g.forkLog.lastStore())
		stop()
		tuttidPeak = max(tuttidPeak, peakRSS(b))
		if src := res.Session.RuntimeContext["forkMessageSource"]; src != fork.SourceProviderTurns {
			b.Fatalf("child history from %v, want the provider's", src)
		}
		if res.Session.LastMessageVersion < int64(c.turns) {
			b.Fatalf("child has %d messages, want at least %d", res.Session.LastMessageVersion, c.turns)
		}
	}
	forkRaw := func() {
		p, err := g.rt.current()
		if err != nil {
			b.Fatal(err)
		}
		resetPeakRSS(b)
		t0 := time.Now()
		var resp wireThreadResponse
		if err := g.rt.call(ctx, p, "thread/fork", map[string]any{"threadId": parent.ProviderSessionID}, &resp); err != nil {
			b.Fatal(err)
		}
		raw = append(raw, time.Since(t0))
		rawPeak = max(rawPeak, peakRSS(b))
		if len(resp.Thread.Turns) != c.turns {
			b.Fatalf("raw fork returned %d turns, want %d", len(resp.Thread.Turns), c.turns)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		benchtest.Alternate(i, func() { forkTuttid(i) }, forkRaw)
		ratios = append(ratios, float64(tuttid[i])/float64(raw[i]))
	}
	b.StopTimer()
	mt, mr := benchtest.Median(tuttid), benchtest.Median(raw)
	b.ReportMetric(float64(mt.Microseconds())/1000, "tuttid-ms")
	b.ReportMetric(float64(mr.Microseconds())/1000, "raw-ms")
	// tuttid's time after Codex's answer: storing the child.
	b.ReportMetric(float64(benchtest.Median(stored).Microseconds())/1000, "store-ms")
	b.ReportMetric(float64(mt)/float64(mr), "ratio")
	b.ReportMetric(slices.Min(ratios), "ratio-min")
	b.ReportMetric(slices.Max(ratios), "ratio-max")
	b.ReportMetric(float64(tuttidPeak)/(1<<20), "tuttid-peak-MiB")
	b.ReportMetric(float64(rawPeak)/(1<<20), "raw-peak-MiB")
}

// forkProfileEnv, when set to a directory, has BenchmarkForkCurve write a
// CPU profile of each of tuttid's forks there.
const forkProfileEnv = "TUTTID_BENCH_FORK_PROFILE"

func startForkProfile(b *testing.B, name string, round int) (stop func()) {
	dir := os.Getenv(forkProfileEnv)
	if dir == "" {
		return func() {}
	}
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("fork-%s-%d.pprof", strings.ReplaceAll(name, "=", ""), round)))
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }
}

// curveReply is a reply of size bytes, unlike any other turn's.
func curveReply(prompt string, size int) string {
	var sb strings.Builder
	sb.Grow(size + 128)
	for i := 0; sb.Len() < size; i++ {
		fmt.Fprintf(&sb, "%s line %07d: the quick brown fox jumps over the lazy dog, 0123456789\n", prompt, i)
	}
	return sb.String()[:size]
}

// resetPeakRSS returns what it can to the OS and resets this process's
// VmHWM (clear_refs 5), so that peakRSS reads what follows.
func resetPeakRSS(b *testing.B) {
	runtime.GC()
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Logf("cannot reset the peak RSS: %v", err)
	}
}

// peakRSS is this process's VmHWM in bytes (0 where /proc has none).
func peakRSS(b *testing.B) int64 {
	s, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(s), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				b.Fatalf("VmHWM %q: %v", v, err)
			}
			return kb << 10
		}
	}
	return 0
}
