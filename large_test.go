package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"tuttid/codex/codextest"
)

// largeEnv overrides the number of turns of TestLargeSessionBoundedMemory
// (default: the 16 turns of 5 MB, about 80 MB of history, which
// takes about half a minute here); a smaller number is quicker while
// investigating.
const largeEnv = "TUTTID_LARGE_SESSION"

const (
	largeReplyBytes = 5 << 20
	largeDeltaBytes = 4 << 10 // a streamed delta; ~1,300 per reply
	largeRSSBound   = 512 << 20
)

func largeTurns(t *testing.T) int {
	v := os.Getenv(largeEnv)
	if v == "" {
		return 16
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s must be a number of turns, not %q", largeEnv, v)
	}
	return n
}

// largeReply is turn n's assistant text: size bytes of numbered lines, so
// that no two replies (and no two pages) are alike.
func largeReply(n, size int) string {
	var b strings.Builder
	b.Grow(size + 128)
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "turn %02d line %07d: the quick brown fox jumps over the lazy dog, 0123456789\n", n, i)
	}
	return b.String()[:size]
}

// TestLargeSessionBoundedMemory is the large session, driven as a
// client over HTTP against tuttid in its own process on the real Codex:
// turns whose replies are 5 MB each (streamed in deltas), a fork of the
// whole session, then both sessions read through GraphQL pages. tuttid's
// peak RSS (VmHWM, its own process only) stays under 512 MiB in every
// phase, and the child's history is the parent's.
func TestLargeSessionBoundedMemory(t *testing.T) {
	r := newCrashRig(t)
	turns := largeTurns(t)
	r.model.SetLogf(nil) // one line per request is noise at this size
	r.model.SetReply(func(req codextest.Request) codextest.Reply {
		n, err := strconv.Atoi(strings.TrimPrefix(req.LastUserText(), "turn "))
		if err != nil {
			return codextest.Reply{Text: "unexpected: " + req.LastUserText()}
		}
		return codextest.Reply{Text: largeReply(n, largeReplyBytes), ChunkBytes: largeDeltaBytes}
	})
	p := r.tuttid()
	pid := p.cmd.Process.Pid
	rss := newRSSProbe(t, pid)

	var w struct{ CreateWorkspace struct{ ID string } }
	p.must(`mutation($in: CreateWorkspaceInput!) { createWorkspace(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"name": "large", "rootPath": r.root}}, &w)
	ws := w.CreateWorkspace.ID
	var s struct{ StartSession struct{ ID string } }
	p.must(`mutation($in: StartSessionInput!) { startSession(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "title": "Large"}}, &s)
	parent := s.StartSession.ID

	// Build: one turn at a time, each waited for.
	start := time.Now()
	t.Logf("start: tuttid peak RSS %s", mib(rss.phase()))
	for i := 1; i <= turns; i++ {
		p.send(ws, parent, fmt.Sprintf("turn %d", i))
		waitTurns(t, p, ws, parent, i)
		r.model.ForgetRequests() // each holds the whole conversation (test memory)
	}
	build := rss.phase()
	t.Logf("build: %d turns of %d MiB in %s, tuttid peak RSS %s", turns, largeReplyBytes>>20, time.Since(start).Round(time.Millisecond), mib(build))

	// Read the parent through GraphQL pages.
	start = time.Now()
	ph := readHistory(t, p, ws, parent)
	readParent := rss.phase()
	t.Logf("read parent: %s in %s, tuttid peak RSS %s", ph, time.Since(start).Round(time.Millisecond), mib(readParent))

	// Fork the whole session while another client writes: its writes wait
	// for the fork's one transaction (SQLite has one writer) but must not
	// fail.
	stopWrites, writes := make(chan struct{}), make(chan writesDuring, 1)
	go func() { writes <- writeUntil(p, r.root, stopWrites) }()
	start = time.Now()
	var f forkPayload
	largeGQL(t, p, 10*time.Minute, `mutation($in: ForkSessionInput!) { forkSession(input: $in) { session { id providerSessionId } } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": parent, "requestId": "large-fork"}}, &f)
	child := f.ForkSession.Session.ID
	forked := rss.phase()
	t.Logf("fork: %s, tuttid peak RSS %s", time.Since(start).Round(time.Millisecond), mib(forked))
	close(stopWrites)
	wd := <-writes
	t.Logf("writes of another client during the fork: %d, the slowest %s", wd.n, wd.slowest.Round(time.Millisecond))
	if wd.err != nil {
		t.Errorf("a write of another client during the fork failed: %v", wd.err)
	}

	// Read the child the same way.
	start = time.Now()
	ch := readHistory(t, p, ws, child)
	readChild := rss.phase()
	t.Logf("read child: %s in %s, tuttid peak RSS %s", ch, time.Since(start).Round(time.Millisecond), mib(readChild))

	overall := rss.overall()
	t.Logf("tuttid peak RSS over the run: %s (bound %s); history %d MiB", mib(overall), mib(largeRSSBound), turns*largeReplyBytes>>20)

	if ph.assistant != turns || ph.assistantBytes != int64(turns*largeReplyBytes) {
		t.Errorf("parent history has %d assistant messages of %d bytes, want %d of %d", ph.assistant, ph.assistantBytes, turns, turns*largeReplyBytes)
	}
	if ch.count != ph.count || ch.bytes != ph.bytes || ch.hash != ph.hash {
		t.Errorf("child history %s differs from the parent's %s", ch, ph)
	}
	for name, v := range map[string]int64{"build": build, "read parent": readParent, "fork": forked, "read child": readChild, "whole run": overall} {
		if v >= largeRSSBound {
			t.Errorf("tuttid peak RSS during %s = %s, want under %s", name, mib(v), mib(largeRSSBound))
		}
	}
}

// waitTurns polls until the session has n turns, all ended, and is READY.
func waitTurns(t *testing.T, p *proc, ws, id string, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		var out struct {
			Session struct {
				Status string
				Turns  []struct{ Status string }
			}
		}
		p.must(`query($ws: ID!, $id: ID!) { session(workspaceId: $ws, id: $id) { status turns { status } } }`,
			map[string]any{"ws": ws, "id": id}, &out)
		s := out.Session
		if len(s.Turns) == n && s.Status == "READY" && s.Turns[n-1].Status != "IN_PROGRESS" {
			if st := s.Turns[n-1].Status; st != "COMPLETED" {
				t.Fatalf("turn %d ended %s", n, st)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("turn %d not completed: %+v", n, s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// history sums what a session's messages pages returned.
type history struct {
	count, assistant      int
	bytes, assistantBytes int64
	pages                 int
	hash                  string // of every message's role and text, in order
}

func (h history) String() string {
	return fmt.Sprintf("{%d messages (%d assistant), %d bytes of text, %d pages, sha256 %.12s}", h.count, h.assistant, h.bytes, h.pages, h.hash)
}

// readHistory reads a session's messages with first: 50 / after to the end.
func readHistory(t *testing.T, p *proc, ws, id string) history {
	t.Helper()
	var h history
	sum := sha256.New()
	var after any
	for {
		var out struct {
			Session struct {
				Messages struct {
					Edges []struct {
						Node struct{ Role, Text string }
					}
					PageInfo struct {
						HasNextPage bool
						EndCursor   string
					}
				}
			}
		}
		largeGQL(t, p, 5*time.Minute, `query($ws: ID!, $id: ID!, $after: Cursor) { session(workspaceId: $ws, id: $id) {
			messages(first: 50, after: $after) { edges { node { role text } } pageInfo { hasNextPage endCursor } } } }`,
			map[string]any{"ws": ws, "id": id, "after": after}, &out)
		h.pages++
		m := out.Session.Messages
		for _, e := range m.Edges {
			h.count++
			h.bytes += int64(len(e.Node.Text))
			if e.Node.Role == "assistant" {
				h.assistant++
				h.assistantBytes += int64(len(e.Node.Text))
			}
			fmt.Fprintf(sum, "%s\x00%d\x00", e.Node.Role, len(e.Node.Text))
			io.WriteString(sum, e.Node.Text)
		}
		if !m.PageInfo.HasNextPage {
			break
		}
		if len(m.Edges) == 0 {
			t.Fatalf("session %s: empty page with hasNextPage", id)
		}
		after = m.PageInfo.EndCursor
	}
	h.hash = hex.EncodeToString(sum.Sum(nil))
	return h
}

// largeGQL is proc.must with a longer timeout (a fork of the whole session
// and pages of megabytes).
func largeGQL(t *testing.T, p *proc, timeout time.Duration, query string, vars map[string]any, out any) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, p.url+"/query", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer resp.Body.Close()
	var env struct {
		Data   json.RawMessage `json:"data"`
		Errors []gqlErr        `json:"errors"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		t.Fatalf("status %d: %v", resp.StatusCode, err)
	}
	if len(env.Errors) > 0 {
		t.Fatalf("%s: %+v", strings.Fields(query)[0], env.Errors)
	}
	if err := json.Unmarshal(env.Data, out); err != nil {
		t.Fatal(err)
	}
}

// rssProbe reads a process's peak resident set (VmHWM): over the whole run,
// and per phase by resetting the peak (clear_refs 5) at each phase's start.
type rssProbe struct {
	t      *testing.T
	pid    int
	resets bool  // the kernel lets us reset the peak
	max    int64 // highest phase peak seen
}

func newRSSProbe(t *testing.T, pid int) *rssProbe {
	return &rssProbe{t: t, pid: pid}
}

// phase returns the peak since the last call and starts a new phase.
func (r *rssProbe) phase() int64 {
	v := r.hwm()
	r.max = max(r.max, v)
	err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", r.pid), []byte("5"), 0)
	r.resets = err == nil
	if !r.resets {
		r.t.Logf("cannot reset the peak RSS (%v): phase figures are cumulative", err)
	}
	return v
}

// overall is the highest peak of the run (every phase's, and the last
// one's so far).
func (r *rssProbe) overall() int64 { return max(r.max, r.hwm()) }

func (r *rssProbe) hwm() int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", r.pid))
	if err != nil {
		r.t.Fatalf("read tuttid's status: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				r.t.Fatalf("VmHWM %q: %v", v, err)
			}
			return kb << 10
		}
	}
	r.t.Fatalf("no VmHWM in /proc/%d/status", r.pid)
	return 0
}

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

// writesDuring is what writeUntil saw.
type writesDuring struct {
	n       int
	slowest time.Duration
	err     error
}

// writeUntil creates workspaces, one after another, until stop is closed,
// and reports how many, the slowest, and the first failure.
func writeUntil(p *proc, root string, stop <-chan struct{}) writesDuring {
	var wd writesDuring
	for {
		select {
		case <-stop:
			return wd
		default:
		}
		body, _ := json.Marshal(map[string]any{
			"query":     `mutation($in: CreateWorkspaceInput!) { createWorkspace(input: $in) { id } }`,
			"variables": map[string]any{"in": map[string]any{"name": fmt.Sprintf("during-%d", wd.n), "rootPath": root}},
		})
		req, _ := http.NewRequest(http.MethodPost, p.url+"/query", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+testToken)
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			wd.err = err
			return wd
		}
		var env struct{ Errors []gqlErr }
		err = json.NewDecoder(resp.Body).Decode(&env)
		resp.Body.Close()
		wd.slowest = max(wd.slowest, time.Since(start))
		switch {
		case err != nil:
			wd.err = err
			return wd
		case len(env.Errors) > 0:
			wd.err = fmt.Errorf("%+v", env.Errors)
			return wd
		}
		wd.n++
		time.Sleep(50 * time.Millisecond)
	}
}
