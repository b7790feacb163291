package server_test

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"tuttid/ent/forkjournal"
	"tuttid/ent/message"
	"tuttid/ent/sessionfork"
	"tuttid/session"
)

// soakSize is the soak's workload: the short form runs in CI; set
// TUTTID_SOAK=long for the long one (hundreds of forks, thousands of
// messages, dozens of subscribers: several minutes).
type soakSize struct{ workers, forksPerWorker, messagesPerWorker, subscribers int }

func soakSizeFromEnv() soakSize {
	if os.Getenv("TUTTID_SOAK") == "long" {
		return soakSize{workers: 6, forksPerWorker: 50, messagesPerWorker: 500, subscribers: 36}
	}
	return soakSize{workers: 4, forksPerWorker: 10, messagesPerWorker: 12, subscribers: 16}
}

// TestSoak runs forks and messages on the real Codex from several workers
// while subscribers follow the workspace; then every fork has exactly one
// child and one lineage row, every subscriber that kept up got every event
// (contiguous seqs), no message is left in progress, no fork attempt is
// unfinished, and the heap and goroutines are back near where they began.
func TestSoak(t *testing.T) {
	size := soakSizeFromEnv()
	h := startServer(t, harnessOpts{})
	ws := h.createWorkspace("soak")
	roots := make([]sessionView, size.workers)
	for i := range roots {
		roots[i] = h.startSession(ws, fmt.Sprintf("root %d", i))
		h.send(ws, roots[i].ID, "warm up") // Codex forks only a thread with a turn
	}
	heapBefore, goroutinesBefore := settledMemory()

	type follower struct {
		c     *wsClient
		sub   *wsSub
		after int64
	}
	followers := make([]follower, size.subscribers)
	for i := range followers {
		c := h.ws(wsProtocols[i%len(wsProtocols)])
		sub := c.subscribe(activityQuery, activityVars(ws, "", 0))
		followers[i] = follower{c: c, sub: sub, after: h.awaitLive(sub, ws)}
	}
	// Each follower reads all the time until the final marker (the only
	// event without a session from here on), checking as it goes that its
	// seqs are contiguous; it keeps no events, so that the heap measured at
	// the end is the server's. One the broker drops as slow (it could not
	// keep up on a loaded machine) gets RESYNC_REQUIRED and is counted out.
	var fwg sync.WaitGroup
	ferrs := make([]error, len(followers))
	dropped := make([]bool, len(followers))
	for i, f := range followers {
		fwg.Add(1)
		go func() {
			defer fwg.Done()
			want := f.after + 1
			for {
				e, err := nextEvent(f.sub, 2*time.Minute)
				if err != nil {
					ferrs[i] = err
					return
				}
				if e.Kind == "RESYNC_REQUIRED" {
					dropped[i] = true
					return
				}
				if e.Seq != want {
					ferrs[i] = fmt.Errorf("got seq %d (%s), want %d: an event was lost or repeated", e.Seq, e.Kind, want)
					return
				}
				want++
				if e.AgentSessionID == "" && e.Kind == "SESSION_UPDATED" {
					return
				}
			}
		}()
	}

	// The workers: each owns its tree, so its forks and sends never find a
	// session busy with another worker's turn.
	var wg sync.WaitGroup
	werrs := make(chan error, size.workers)
	forks := make(chan [2]string, size.workers*size.forksPerWorker) // requestId, child id
	for w := range size.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			current := roots[w].ID
			sends, made := 0, 0
			for sends < size.messagesPerWorker || made < size.forksPerWorker {
				if sends < size.messagesPerWorker {
					if err := soakSend(h, ws, current, fmt.Sprintf("w%d m%d", w, sends)); err != nil {
						werrs <- err
						return
					}
					sends++
				}
				if made < size.forksPerWorker && sends*size.forksPerWorker >= made*size.messagesPerWorker {
					req := session.NewID()
					var out struct {
						ForkSession struct{ Session struct{ ID string } }
					}
					if errs := h.do(forkMutation, map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": current, "requestId": req}}, &out); len(errs) > 0 {
						werrs <- fmt.Errorf("worker %d fork: %+v", w, errs)
						return
					}
					forks <- [2]string{req, out.ForkSession.Session.ID}
					current = out.ForkSession.Session.ID
					made++
				}
			}
		}()
	}
	wg.Wait()
	close(werrs)
	close(forks)
	for err := range werrs {
		t.Fatal(err)
	}
	h.publishMarker(ws)
	fwg.Wait()
	kept := 0
	for i, err := range ferrs {
		if err != nil {
			t.Errorf("subscriber %d: %v", i, err)
		}
		if !dropped[i] {
			kept++
		}
	}
	t.Logf("%d of %d subscribers kept up (the others were dropped as slow and told to resync)", kept, len(followers))
	if kept == 0 {
		t.Error("no subscriber kept up: nothing checked that events were not lost")
	}

	ctx := t.Context()
	st := h.srv.Store.Client
	n := 0
	for f := range forks {
		n++
		// A replay gives the same one child.
		var out struct {
			ForkSession struct{ Session struct{ ID string } }
		}
		row, err := st.SessionFork.Query().Where(sessionfork.ForkRequestID(f[0])).Only(ctx)
		if err != nil || row.ChildAgentSessionID != f[1] {
			t.Errorf("fork %s: lineage row %+v (%v), want child %s", f[0], row, err, f[1])
		}
		if n <= 3 {
			parent := row.ParentAgentSessionID
			if errs := h.do(forkMutation, map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": parent, "requestId": f[0]}}, &out); len(errs) > 0 || out.ForkSession.Session.ID != f[1] {
				t.Errorf("replay of %s: %+v %+v, want %s", f[0], out, errs, f[1])
			}
		}
	}
	if want := size.workers * size.forksPerWorker; n != want || st.SessionFork.Query().CountX(ctx) != want {
		t.Errorf("%d forks, %d lineage rows, want %d", n, st.SessionFork.Query().CountX(ctx), want)
	}
	if c := st.ForkJournal.Query().Where(forkjournal.StateNEQ(forkjournal.StateDone)).CountX(ctx); c != 0 {
		t.Errorf("%d fork journal entries not done", c)
	}
	if c := st.Message.Query().Where(message.Status("in_progress")).CountX(ctx); c != 0 {
		t.Errorf("%d messages left in progress", c)
	}

	for _, f := range followers {
		f.c.close()
	}
	h.model.ForgetRequests() // the test's own record of every model request
	heapAfter, goroutinesAfter := settledMemory()
	t.Logf("soak %+v: heap %d -> %d KiB, goroutines %d -> %d", size, heapBefore>>10, heapAfter>>10, goroutinesBefore, goroutinesAfter)
	if heapAfter > heapBefore*2+8<<20 {
		t.Errorf("heap %d KiB after the soak, %d KiB before: not back near the start", heapAfter>>10, heapBefore>>10)
	}
	if goroutinesAfter > goroutinesBefore+10 {
		t.Errorf("%d goroutines after the soak, %d before: leak", goroutinesAfter, goroutinesBefore)
	}
}

// soakSend starts a turn and waits until the session is READY with it
// completed, without failing the test from a worker goroutine.
func soakSend(h *harness, ws, id, text string) error {
	var out struct{ SendMessage struct{ ID string } }
	if errs := h.do(`mutation($in: SendMessageInput!) { sendMessage(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": id, "text": text}}, &out); len(errs) > 0 {
		return fmt.Errorf("send %q: %+v", text, errs)
	}
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		var s struct{ Session *sessionView }
		// The latest turns only: the long soak's sessions pass the 500 turns
		// an unpaged list answers (result_too_large).
		if errs := h.do(`query($ws: ID!, $id: ID!) { session(workspaceId: $ws, id: $id) { status turns(last: 5) { id status } } }`,
			map[string]any{"ws": ws, "id": id}, &s); len(errs) > 0 {
			return fmt.Errorf("read %s: %+v", id, errs)
		}
		for _, tr := range s.Session.Turns {
			if tr.ID == out.SendMessage.ID && tr.Status != "IN_PROGRESS" {
				if tr.Status != "COMPLETED" {
					return fmt.Errorf("turn %q ended %s", text, tr.Status)
				}
				if s.Session.Status == "READY" {
					return nil
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("turn %q did not complete", text)
}

// settledMemory is the live heap and goroutine count once the garbage
// collector and the server's idle goroutines have settled.
func settledMemory() (heap uint64, goroutines int) {
	var ms runtime.MemStats
	for range 3 {
		time.Sleep(200 * time.Millisecond)
		runtime.GC()
	}
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc, runtime.NumGoroutine()
}
