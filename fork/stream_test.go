package fork_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"tuttid/agent"
	"tuttid/agent/agenttest"
	"tuttid/ent/turn"
	"tuttid/fork"
)

// pageStream is an agent.HistoryStream that makes each page only when
// asked (so it holds none itself), can fail at a page, and records how it
// was consumed: whether Next was ever called again before the previous
// call returned, and the Go heap as each page is asked for.
type pageStream struct {
	pages, turnsPerPage, textBytes int
	failAt                         int // 1-based page whose Next fails; 0: none
	// probe, when set, runs in each Next before the page is made: what
	// the server can do while the provider is still sending.
	probe func()

	mu       sync.Mutex
	served   int
	inNext   bool
	overlap  bool
	closed   bool
	heapSeen []uint64
}

var errStreamBroke = errors.New("stream broke")

func (s *pageStream) Next(ctx context.Context) ([]agent.RuntimeTurn, error) {
	s.mu.Lock()
	if s.inNext {
		s.overlap = true
	}
	s.inNext = true
	s.mu.Unlock()
	defer func() { s.mu.Lock(); s.inNext = false; s.mu.Unlock() }()
	if s.textBytes > 0 {
		// The previous page is no longer the stream's: what is still
		// alive now is the consumer's.
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		s.heapSeen = append(s.heapSeen, ms.HeapAlloc)
	}
	if s.probe != nil {
		s.probe()
	}
	if s.served == s.pages {
		return nil, io.EOF
	}
	s.served++
	if s.served == s.failAt {
		return nil, errStreamBroke
	}
	text := strings.Repeat("x", s.textBytes)
	page := make([]agent.RuntimeTurn, s.turnsPerPage)
	for i := range page {
		id := fmt.Sprintf("stream-p%03d-t%d", s.served, i)
		page[i] = agent.RuntimeTurn{ID: id, Status: agent.TurnCompleted, Messages: []agent.RuntimeMessage{
			{ID: id + "-user", Role: "user", Kind: "userMessage", Text: "q", Status: "completed"},
			{ID: id + "-assistant", Role: "assistant", Kind: "agentMessage", Text: text + fmt.Sprint(i), Status: "completed"},
		}}
	}
	return page, nil
}

func (s *pageStream) Close() { s.mu.Lock(); s.closed = true; s.mu.Unlock() }

// TestForkStreamsHistoryPageByPage: a child history of 64 pages of 512 KiB
// (32 MiB) is stored with the Go heap never holding more than a few pages
// of it, Next called one page at a time, versions 1..n in order across
// pages, and the stream closed.
func TestForkStreamsHistoryPageByPage(t *testing.T) {
	const pages, perPage, text = 64, 2, 256 << 10
	e := newEnv(t)
	e.st.Session(defaultParent())
	st := &pageStream{pages: pages, turnsPerPage: perPage, textBytes: text}
	e.rt.ScriptForks(agenttest.ForkAnswer{Result: agent.RuntimeForkResult{
		Session: agent.RuntimeSession{ThreadID: "thread-stream", Status: agent.ThreadIdle}, History: st,
	}})
	res := e.mustFork(input("req-stream"))

	if st.overlap || !st.closed {
		t.Errorf("stream: Next overlapped %v, closed %v", st.overlap, st.closed)
	}
	pageBytes := uint64(perPage * text)
	base := slices.Min(st.heapSeen)
	if peak := slices.Max(st.heapSeen); peak-base > 6*pageBytes {
		t.Errorf("heap grew by %d KiB while streaming %d pages of %d KiB: pages are being held", (peak-base)>>10, pages, pageBytes>>10)
	}
	child := e.session(res.Session.ID)
	msgs := e.messages(child.ID)
	if len(msgs) != pages*perPage*2 || child.LastMessageVersion != int64(len(msgs)) {
		t.Fatalf("child has %d messages (last version %d), want %d", len(msgs), child.LastMessageVersion, pages*perPage*2)
	}
	for i, m := range msgs {
		p, tn := i/(perPage*2)+1, i/2%perPage
		want := fmt.Sprintf("stream-p%03d-t%d", p, tn)
		if m.Version != int64(i+1) || m.TurnID != want || !strings.HasPrefix(m.MessageID, want) {
			t.Fatalf("message %d = %s of turn %s, version %d; want turn %s, version %d", i, m.MessageID, m.TurnID, m.Version, want, i+1)
		}
	}
	if src := child.RuntimeContext["forkMessageSource"]; src != fork.SourceProviderTurns {
		t.Errorf("forkMessageSource = %v", src)
	}
	turns := e.turns(child.ID)
	if len(turns) != pages*perPage || turns[0].TurnID != "stream-p001-t0" || turns[len(turns)-1].TurnID != fmt.Sprintf("stream-p%03d-t%d", pages, perPage-1) {
		t.Errorf("child has %d turns, first %s", len(turns), turns[0].TurnID)
	}
}

// TestForkStreamFailsMidway: the provider's stream fails at page 3, after
// two pages were spooled. The child gets the parent's cached history (the
// design's fallback, the fork's one) and nothing of the stream is stored:
// no turn, no message, versions 1..n.
func TestForkStreamFailsMidway(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		lastTurnID string
		wantTurns  []string
		wantMsgs   []string
	}{
		{"whole parent", "", []string{"t1", "t2"}, []string{"t1-user", "t1-assistant", "t2-user", "t2-reasoning", "t2-assistant"}},
		{"through t1", "t1", []string{"t1"}, []string{"t1-user", "t1-assistant"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.st.Session(defaultParent())
			before := e.counts()
			st := &pageStream{pages: 5, turnsPerPage: 3, failAt: 3}
			e.rt.ScriptForks(agenttest.ForkAnswer{Result: agent.RuntimeForkResult{
				Session: agent.RuntimeSession{ThreadID: "thread-broken", Status: agent.ThreadIdle}, History: st,
			}})
			in := input("req-broken")
			in.LastTurnID = tc.lastTurnID
			res := e.mustFork(in)

			if !st.closed || st.served != 3 {
				t.Errorf("stream served %d pages, closed %v", st.served, st.closed)
			}
			child := e.session(res.Session.ID)
			var gotMsgs []string
			for i, m := range e.messages(child.ID) {
				gotMsgs = append(gotMsgs, m.MessageID)
				if m.Version != int64(i+1) {
					t.Errorf("message %s version %d, want %d", m.MessageID, m.Version, i+1)
				}
			}
			if !slices.Equal(gotMsgs, tc.wantMsgs) || child.LastMessageVersion != int64(len(tc.wantMsgs)) {
				t.Errorf("child messages %v (last version %d), want %v", gotMsgs, child.LastMessageVersion, tc.wantMsgs)
			}
			var gotTurns []string
			for _, tr := range e.turns(child.ID) {
				gotTurns = append(gotTurns, tr.TurnID)
				if tr.Status != turn.StatusCOMPLETED {
					t.Errorf("turn %s %s", tr.TurnID, tr.Status)
				}
			}
			if !slices.Equal(gotTurns, tc.wantTurns) {
				t.Errorf("child turns %v, want %v", gotTurns, tc.wantTurns)
			}
			if src := child.RuntimeContext["forkMessageSource"]; src != fork.SourceParentCache {
				t.Errorf("forkMessageSource = %v, want %q", src, fork.SourceParentCache)
			}
			// Nothing of the two stored pages survived anywhere.
			after := e.counts()
			if after.Messages != before.Messages+len(tc.wantMsgs) || after.Turns != before.Turns+len(tc.wantTurns) {
				t.Errorf("rows: messages %d -> %d, turns %d -> %d", before.Messages, after.Messages, before.Turns, after.Turns)
			}
		})
	}
}

// TestForkWritesWhileTheProviderSends: while the provider's pages are
// still coming, the write lock is free. A long history on a busy Codex
// takes seconds a page; holding SQLite's one write lock meanwhile made
// every other write of the server wait, past the busy timeout (the long
// soak's sendMessage failed with SQLITE_BUSY). Each page's Next takes the
// lock itself on another connection, without waiting.
func TestForkWritesWhileTheProviderSends(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.st.Session(defaultParent())
	var busy []error
	st := &pageStream{pages: 4, turnsPerPage: 2, probe: func() {
		conn, err := e.st.DB.Conn(e.ctx)
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		defer conn.ExecContext(e.ctx, "PRAGMA busy_timeout = 30000")
		if _, err := conn.ExecContext(e.ctx, "PRAGMA busy_timeout = 0"); err != nil {
			t.Error(err)
			return
		}
		if _, err := conn.ExecContext(e.ctx, "BEGIN IMMEDIATE"); err != nil {
			busy = append(busy, err)
			return
		}
		if _, err := conn.ExecContext(e.ctx, "ROLLBACK"); err != nil {
			t.Error(err)
		}
	}}
	e.rt.ScriptForks(agenttest.ForkAnswer{Result: agent.RuntimeForkResult{
		Session: agent.RuntimeSession{ThreadID: "thread-probed", Status: agent.ThreadIdle}, History: st,
	}})
	res := e.mustFork(input("req-probed"))
	if len(busy) > 0 {
		t.Errorf("the write lock was held while the provider sent pages: %v", busy)
	}
	if n := len(e.turns(res.Session.ID)); n != 8 {
		t.Errorf("child has %d turns, want 8", n)
	}
}
