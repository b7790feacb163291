package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"
)

// event is one line of go test -json (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

// report follows the events of one go test run and writes what a person
// watching needs.
type report struct {
	out   io.Writer
	start time.Time

	mu      sync.Mutex
	running map[string]time.Time // package -> when it started
	pkgs    map[string]*pkgCount
	// output of each test (and each package's own lines, test ""),
	// kept until it passes; printed when it fails.
	output                  map[string][]string
	passed, failed, skipped int
	pkgFailed               []string
	// skips: each skipped test and why (its last line of output), for
	// the end: a skip is a test that did not prove anything.
	skips []string
}

type pkgCount struct{ passed, failed, skipped int }

func newReport(out io.Writer, start time.Time) *report {
	return &report{out: out, start: start, running: map[string]time.Time{}, pkgs: map[string]*pkgCount{},
		output: map[string][]string{}}
}

// read handles every event of r until it ends.
func (r *report) read(in io.Reader) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			// Not an event (a line go test printed itself): shown as is.
			r.mu.Lock()
			fmt.Fprintln(r.out, sc.Text())
			r.mu.Unlock()
			continue
		}
		r.handle(e, time.Now())
	}
	return sc.Err()
}

func (r *report) handle(e event, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	key := e.Package + "\x00" + e.Test
	switch e.Action {
	case "start":
		r.running[e.Package] = now
		r.pkgs[e.Package] = &pkgCount{}
		fmt.Fprintf(r.out, "▶ %s\n", e.Package)
	case "output", "build-output":
		r.output[key] = append(r.output[key], e.Output)
	case "pass", "fail", "skip":
		if e.Test == "" {
			r.endPackage(e)
			return
		}
		c := r.pkgs[e.Package]
		if c == nil {
			c = &pkgCount{}
			r.pkgs[e.Package] = c
		}
		switch e.Action {
		case "pass":
			r.passed++
			c.passed++
		case "skip":
			r.skipped++
			c.skipped++
			r.skips = append(r.skips, fmt.Sprintf("%s %s: %s", e.Package, e.Test, skipReason(r.output[key])))
		case "fail":
			r.failed++
			c.failed++
			fmt.Fprintf(r.out, "--- FAIL: %s %s (%.1fs)\n%s", e.Package, e.Test, e.Elapsed, strings.Join(r.output[key], ""))
		}
		delete(r.output, key)
	}
}

// endPackage reports a package's end: its counts, and its own output
// when it failed without a failed test (a build failure, a panic, a
// timeout, TestMain).
func (r *report) endPackage(e event) {
	delete(r.running, e.Package)
	c := r.pkgs[e.Package]
	if c == nil {
		c = &pkgCount{}
	}
	key := e.Package + "\x00"
	own := r.output[key]
	delete(r.output, key)
	switch {
	case e.Action == "skip" && c.passed+c.failed+c.skipped == 0:
		return // no test files: nothing to say
	case e.Action == "fail":
		r.pkgFailed = append(r.pkgFailed, e.Package)
		if c.failed == 0 {
			fmt.Fprintf(r.out, "--- FAIL: %s\n%s", e.Package, strings.Join(own, ""))
		}
		fmt.Fprintf(r.out, "FAIL %s %.1fs (%s)\n", e.Package, e.Elapsed, c)
	default:
		fmt.Fprintf(r.out, "ok   %s %.1fs (%s)\n", e.Package, e.Elapsed, c)
	}
}

func (c *pkgCount) String() string {
	s := fmt.Sprintf("%d passed", c.passed)
	if c.failed > 0 {
		s += fmt.Sprintf(", %d failed", c.failed)
	}
	if c.skipped > 0 {
		s += fmt.Sprintf(", %d skipped", c.skipped)
	}
	return s
}

// still names the packages running at now, the longest first.
func (r *report) still(now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.running) == 0 {
		return
	}
	names := make([]string, 0, len(r.running))
	for p := range r.running {
		names = append(names, p)
	}
	sort.Slice(names, func(i, j int) bool {
		if !r.running[names[i]].Equal(r.running[names[j]]) {
			return r.running[names[i]].Before(r.running[names[j]])
		}
		return names[i] < names[j]
	})
	parts := make([]string, len(names))
	for i, p := range names {
		parts[i] = fmt.Sprintf("%s (%s)", p, now.Sub(r.running[p]).Round(time.Second))
	}
	fmt.Fprintf(r.out, "… %s: still running %s\n", now.Sub(r.start).Round(time.Second), strings.Join(parts, ", "))
}

// skipReason is the last line a skipped test printed before its
// "--- SKIP" line (t.Skip's message).
func skipReason(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l != "" && !strings.HasPrefix(l, "--- SKIP") && !strings.HasPrefix(l, "=== ") {
			return l
		}
	}
	return "no reason given"
}

// maxSkipsShown bounds the skipped tests named at the end.
const maxSkipsShown = 20

// summary names the skipped tests, then writes the last line: every
// test's outcome and the time.
func (r *report) summary(now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.skips) > 0 {
		fmt.Fprintln(r.out, "\nskipped:")
		for i, s := range r.skips {
			if i == maxSkipsShown {
				fmt.Fprintf(r.out, "  … and %d more\n", len(r.skips)-maxSkipsShown)
				break
			}
			fmt.Fprintln(r.out, "  "+s)
		}
	}
	verdict := "PASS"
	if r.failed > 0 || len(r.pkgFailed) > 0 {
		verdict = "FAIL"
	}
	line := fmt.Sprintf("%s: %d passed, %d failed, %d skipped in %s", verdict, r.passed, r.failed, r.skipped,
		now.Sub(r.start).Round(time.Second))
	if len(r.pkgFailed) > 0 {
		line += "; failed packages: " + strings.Join(r.pkgFailed, " ")
	}
	fmt.Fprintln(r.out, "\n"+line)
}
