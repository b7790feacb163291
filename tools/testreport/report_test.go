package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestReport(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		events string
		want   []string // substrings, in order
		not    []string
	}{
		{"a passing package", `
{"Action":"start","Package":"p/a"}
{"Action":"run","Package":"p/a","Test":"TestOne"}
{"Action":"output","Package":"p/a","Test":"TestOne","Output":"noise\n"}
{"Action":"pass","Package":"p/a","Test":"TestOne","Elapsed":0.5}
{"Action":"output","Package":"p/a","Test":"TestTwo","Output":"    a_test.go:7: no chromium\n"}
{"Action":"output","Package":"p/a","Test":"TestTwo","Output":"--- SKIP: TestTwo (0.00s)\n"}
{"Action":"skip","Package":"p/a","Test":"TestTwo"}
{"Action":"pass","Package":"p/a","Elapsed":1.25}`,
			[]string{"▶ p/a", "ok   p/a 1.2s (1 passed, 1 skipped)", "skipped:\n  p/a TestTwo: a_test.go:7: no chromium",
				"PASS: 1 passed, 0 failed, 1 skipped in 2m0s"},
			[]string{"noise"}},
		{"a failed test shows its output", `
{"Action":"start","Package":"p/b"}
{"Action":"output","Package":"p/b","Test":"TestBad","Output":"    b_test.go:9: why\n"}
{"Action":"fail","Package":"p/b","Test":"TestBad","Elapsed":2}
{"Action":"fail","Package":"p/b","Elapsed":3}`,
			[]string{"--- FAIL: p/b TestBad (2.0s)\n    b_test.go:9: why", "FAIL p/b 3.0s (0 passed, 1 failed)",
				"FAIL: 0 passed, 1 failed, 0 skipped in 2m0s; failed packages: p/b"}, nil},
		{"a package failing with no failed test shows its own output", `
{"Action":"start","Package":"p/c"}
{"Action":"output","Package":"p/c","Output":"panic: test timed out after 30m0s\n"}
{"Action":"fail","Package":"p/c","Elapsed":1800}`,
			[]string{"--- FAIL: p/c\npanic: test timed out", "FAIL: 0 passed, 0 failed, 0 skipped in 2m0s; failed packages: p/c"}, nil},
		{"a package without tests says nothing", `
{"Action":"start","Package":"p/d"}
{"Action":"output","Package":"p/d","Output":"?   \tp/d\t[no test files]\n"}
{"Action":"skip","Package":"p/d","Elapsed":0}`,
			[]string{"▶ p/d", "PASS: 0 passed"}, []string{"ok   p/d", "no test files"}},
		{"a line that is not an event is shown", "# p/e\nbuild failed here\n",
			[]string{"# p/e\nbuild failed here"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			r := newReport(&out, start)
			if err := r.read(strings.NewReader(strings.TrimPrefix(tc.events, "\n"))); err != nil {
				t.Fatal(err)
			}
			r.summary(start.Add(2 * time.Minute))
			got := out.String()
			rest := got
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("output lacks %q (in order):\n%s", w, got)
				}
				rest = rest[i+len(w):]
			}
			for _, n := range tc.not {
				if strings.Contains(got, n) {
					t.Errorf("output has %q:\n%s", n, got)
				}
			}
		})
	}
}

func TestStillNamesTheRunningPackagesLongestFirst(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	start := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	r := newReport(&out, start)
	r.handle(event{Action: "start", Package: "p/slow"}, start)
	r.handle(event{Action: "start", Package: "p/late"}, start.Add(time.Minute))
	r.handle(event{Action: "start", Package: "p/done"}, start)
	r.handle(event{Action: "pass", Package: "p/done"}, start.Add(time.Second))
	r.still(start.Add(3 * time.Minute))
	if want := "… 3m0s: still running p/slow (3m0s), p/late (2m0s)\n"; !strings.HasSuffix(out.String(), want) {
		t.Errorf("got %q, want it to end with %q", out.String(), want)
	}
}

// TestRunReportsARealGoTest runs go test on testdata/sample through run,
// as make test does: the summary counts what ran and the exit code is go
// test's.
func TestRunReportsARealGoTest(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	t.Chdir("testdata/sample")
	for _, tc := range []struct {
		fail    string
		code    int
		summary string
	}{
		{"0", 0, `PASS: 2 passed, 0 failed, 1 skipped in \d+s`},
		{"1", 1, `FAIL: 1 passed, 1 failed, 1 skipped in \d+s; failed packages: sample`},
	} {
		t.Setenv("SAMPLE_FAIL", tc.fail)
		var out, errOut bytes.Buffer
		code := run(context.Background(), []string{"-count=1", "."}, &out, &errOut)
		if code != tc.code {
			t.Errorf("SAMPLE_FAIL=%s: exit %d, want %d\n%s%s", tc.fail, code, tc.code, out.String(), errOut.String())
		}
		if !regexp.MustCompile(tc.summary).MatchString(out.String()) {
			t.Errorf("SAMPLE_FAIL=%s: no summary %q in\n%s", tc.fail, tc.summary, out.String())
		}
		if tc.fail == "1" && !strings.Contains(out.String(), "the reason it failed") {
			t.Errorf("the failed test's output is not shown:\n%s", out.String())
		}
	}
}
