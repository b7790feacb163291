package server_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"tuttid/ent/agentsession"
	"tuttid/ent/forkjournal"
	"tuttid/ent/message"
	"tuttid/ent/sessionfork"
	"tuttid/ent/turn"
	"tuttid/session"
)

// soakSize is the soak's workload: the short form runs in CI; set
// TUTTID_SOAK=long for the long one (hundreds of forks, thousands of
// messages, dozens of subscribers: several minutes). window is how long
// the disk stays full midway.
type soakSize struct {
	workers, forksPerWorker, messagesPerWorker, subscribers int
	window                                                  time.Duration
}

func soakSizeFromEnv() soakSize {
	if os.Getenv("TUTTID_SOAK") == "long" {
		return soakSize{workers: 6, forksPerWorker: 50, messagesPerWorker: 500, subscribers: 36, window: 8 * time.Second}
	}
	return soakSize{workers: 4, forksPerWorker: 10, messagesPerWorker: 12, subscribers: 16, window: 3 * time.Second}
}

// soakTurn is a send the server accepted: the session it went to, its
// text and the turn id sendMessage answered, and how the turn ended.
type soakTurn struct{ session, text, turnID, status, reason string }

// soakLedger counts what the workers did, for the checks at the end.
type soakLedger struct {
	mu                         sync.Mutex
	turns                      []soakTurn
	refusedTurns               []soakTurn // sends refused: none of them may have run
	refusedForkReqs            map[string]bool
	refusedSends, refusedForks int      // storage_unavailable (or, for a fork, agent.fork_persistence_failed)
	refusedOutside             []string // refusals outside the disk-full window: a bug
	windowStart, windowEnd     time.Time
}

// refused counts an answer that the database failed; one outside the window
// (and the few seconds the server takes to find its disk back) is kept
// as an error.
func (l *soakLedger) refused(what string, fork bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if fork {
		l.refusedForks++
	} else {
		l.refusedSends++
	}
	now := time.Now()
	// From the start of the fill (the disk fills as the filler grows) to
	// a few seconds after the free.
	inWindow := !l.windowStart.IsZero() && now.After(l.windowStart) && (l.windowEnd.IsZero() || now.Before(l.windowEnd.Add(10*time.Second)))
	if !inWindow {
		l.refusedOutside = append(l.refusedOutside, fmt.Sprintf("%s at %s", what, now.Format(time.TimeOnly)))
	}
}

func (l *soakLedger) accepted() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.turns)
}

// TestSoak runs forks and messages on the real Codex from several workers
// while subscribers follow the workspace; midway the database's disk is
// full for a few seconds (where the test can mount a tmpfs) and a second
// tuttid is started on the same database, which must be refused while
// the first keeps serving. Then every send the server accepted has its
// turn with its text, COMPLETED (or FAILED/INTERRUPTED with a reason),
// sends refused as storage_unavailable are counted and only inside the
// window, every fork has exactly one child and one lineage row, every
// subscriber that kept up got every event (contiguous seqs), every session
// is idle, no message is left in progress, no fork attempt is unfinished,
// and the heap and goroutines are back near where they began.
func TestSoak(t *testing.T) {
	size := soakSizeFromEnv()
	began := time.Now()
	disk := newSoakDisk(t)
	bin := tuttidBinary(t)
	h := startServer(t, harnessOpts{dbPath: filepath.Join(disk.dir, "tuttid.db")})
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

	// Midway (about half the sends accepted): the disk-full window, then the
	// second server, while the workers go on.
	ledger := &soakLedger{refusedForkReqs: map[string]bool{}}
	workersDone := make(chan struct{})
	midway := make(chan error, 1)
	var second struct {
		code   int
		stderr string
		ran    bool
	}
	go func() {
		// A few sends past half: at exactly half the long soak's workers all
		// stand at a fork point, and the window would see forks only.
		half := size.workers*size.messagesPerWorker/2 + size.workers*size.messagesPerWorker/(4*size.forksPerWorker)
		for ledger.accepted() < half {
			select {
			case <-workersDone:
				midway <- fmt.Errorf("the workers ended before %d sends were accepted", half)
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
		if disk.mounted {
			ledger.mu.Lock()
			ledger.windowStart = time.Now()
			ledger.mu.Unlock()
			// SQLite writes into the space its WAL file already holds (up
			// to the 32 MiB journal_size_limit) without asking the disk: a
			// window that leaves the WAL as it is may see no write fail.
			// A TRUNCATE checkpoint first gives the WAL back to the disk.
			walErr := soakTruncateWAL(h)
			t.Logf("disk-full window: filling at %d accepted sends (database %d KiB; WAL truncated: %v)", ledger.accepted(), disk.dbBytes()>>10, walErr)
			if err := disk.fill(); err != nil {
				_ = disk.free()
				midway <- err
				return
			}
			time.Sleep(size.window)
			err := disk.free()
			ledger.mu.Lock()
			ledger.windowEnd = time.Now()
			ledger.mu.Unlock()
			if err != nil {
				midway <- err
				return
			}
			t.Logf("disk-full window: freed after %s at %d accepted sends", time.Since(ledger.windowStart).Round(time.Millisecond), ledger.accepted())
		}
		code, stderr, err := secondServer(bin, h.dbPath)
		second.code, second.stderr, second.ran = code, stderr, true
		t.Logf("second tuttid on the same --db at %d accepted sends: exit code %d, said: %s", ledger.accepted(), code, strings.TrimSpace(stderr))
		midway <- err
	}()

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
			sends, made, tries := 0, 0, 0
			for sends < size.messagesPerWorker || made < size.forksPerWorker {
				if sends < size.messagesPerWorker {
					// A refused send is counted and the worker sends its next
					// message (a new text); it does not count as sent.
					text := fmt.Sprintf("w%d m%d t%d", w, sends, tries)
					tries++
					st, err := soakSend(h, ws, current, text)
					if err != nil {
						werrs <- err
						return
					}
					if st == nil {
						ledger.refused("send "+text, false)
						ledger.mu.Lock()
						ledger.refusedTurns = append(ledger.refusedTurns, soakTurn{session: current, text: text})
						ledger.mu.Unlock()
						// The next send waits until the session is idle: were a
						// refused turn running after all, it would be busy.
						if err := soakAwaitIdle(h, ws, current); err != nil {
							werrs <- fmt.Errorf("after the refused send %q: %w", text, err)
							return
						}
						time.Sleep(200 * time.Millisecond)
						continue
					}
					ledger.mu.Lock()
					ledger.turns = append(ledger.turns, *st)
					ledger.mu.Unlock()
					sends++
				}
				if made < size.forksPerWorker && sends*size.forksPerWorker >= made*size.messagesPerWorker {
					// A refused fork is counted and retried with the same
					// requestId, as a client would: it must still make one child.
					req := session.NewID()
					var out struct {
						ForkSession struct{ Session struct{ ID string } }
					}
					for {
						errs := h.do(forkMutation, map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": current, "requestId": req}}, &out)
						if len(errs) == 0 {
							break
						}
						// Both say the database failed (503): the fork's child
						// could not be stored and nothing was created.
						if len(errs) == 1 && (errs[0].Code() == "storage_unavailable" || errs[0].Code() == "agent.fork_persistence_failed") {
							ledger.refused("fork "+req+" ("+errs[0].Code()+")", true)
							ledger.mu.Lock()
							ledger.refusedForkReqs[req] = true
							ledger.mu.Unlock()
							time.Sleep(200 * time.Millisecond)
							continue
						}
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
	close(workersDone)
	close(werrs)
	close(forks)
	if err := <-midway; err != nil {
		t.Error(err)
	}
	for err := range werrs {
		t.Fatal(err)
	}
	if !disk.mounted && os.Getenv("CI") != "" {
		t.Log("CI: the disk-full window did not run (no tmpfs)")
	}
	if !second.ran {
		t.Error("the second tuttid was not started")
	} else if want := fmt.Sprintf("in use by another tuttid (pid %d holds %s.lock)", os.Getpid(), h.dbPath); second.code != 1 || !strings.Contains(second.stderr, want) || strings.Contains(second.stderr, "tuttid is ready") {
		t.Errorf("second tuttid: exit code %d, said:\n%s\nwant exit code 1 and %q", second.code, second.stderr, want)
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
			continue
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
	// A fork refused in the window may leave its journal entry unfinished
	// (the entry could not be updated either): it is settled at the next
	// start, checked below. Any other fork's entry is done.
	unfinished := 0
	for _, e := range st.ForkJournal.Query().Where(forkjournal.StateNEQ(forkjournal.StateDone)).AllX(ctx) {
		if !ledger.refusedForkReqs[e.RequestID] {
			t.Errorf("fork journal entry %d (request %s, not refused) is %s: %s", e.ID, e.RequestID, e.State, e.Error)
		}
		unfinished++
		t.Logf("fork journal entry %d of a refused fork (request %s) is %s: %s", e.ID, e.RequestID, e.State, e.Error)
	}
	if c := st.Message.Query().Where(message.Status("in_progress")).CountX(ctx); c != 0 {
		t.Errorf("%d messages left in progress", c)
	}
	if c := st.Turn.Query().Where(turn.StatusEQ(turn.StatusIN_PROGRESS)).CountX(ctx); c != 0 {
		t.Errorf("%d turns left in progress", c)
	}
	for _, a := range st.AgentSession.Query().Where(agentsession.WorkspaceID(ws)).AllX(ctx) {
		if a.Status != agentsession.StatusREADY && a.Status != agentsession.StatusCOMPLETED {
			t.Errorf("session %s is %s at the end, want idle", a.ID, a.Status)
		}
	}

	// Nothing lost: every accepted send has its user message and its turn,
	// ended as the worker saw it.
	ended := map[string]int{}
	for _, s := range ledger.turns {
		ended[s.status]++
		msgs := st.Message.Query().Where(message.AgentSessionID(s.session), message.Role("user"), message.Text(s.text)).AllX(ctx)
		if len(msgs) != 1 {
			t.Errorf("send %q to %s (turn %s): %d user messages with its text, want 1", s.text, s.session, s.turnID, len(msgs))
			continue
		}
		tid := msgs[0].TurnID
		if !strings.HasPrefix(s.turnID, "pending:") && tid != s.turnID {
			t.Errorf("send %q: its message is in turn %s, sendMessage answered %s", s.text, tid, s.turnID)
		}
		tr, err := st.Turn.Query().Where(turn.AgentSessionID(s.session), turn.TurnID(tid)).Only(ctx)
		if err != nil {
			t.Errorf("send %q: turn %s: %v", s.text, tid, err)
			continue
		}
		if string(tr.Status) != s.status {
			// A turn failed for an event lost while the disk was full is
			// re-read from Codex at its end and may be COMPLETED since.
			ended[s.status+"->"+string(tr.Status)]++
		}
		if tr.Status != turn.StatusCOMPLETED && tr.Error == "" {
			t.Errorf("send %q: turn %s ended %s without a reason", s.text, tid, tr.Status)
		}
	}
	// A refused send must not have run: the client was told it failed, and
	// one that retries would send its text twice.
	ran := 0
	for _, s := range ledger.refusedTurns {
		msgs := st.Message.Query().Where(message.AgentSessionID(s.session), message.Role("user"), message.Text(s.text)).AllX(ctx)
		if len(msgs) == 0 {
			continue
		}
		ran++
		status := "no turn"
		if tr, err := st.Turn.Query().Where(turn.AgentSessionID(s.session), turn.TurnID(msgs[0].TurnID)).Only(ctx); err == nil {
			status = string(tr.Status)
		}
		t.Errorf("send %q to %s was refused (storage_unavailable) but its turn %s ran: %d user messages, turn %s", s.text, s.session, msgs[0].TurnID, len(msgs), status)
	}
	for _, r := range ledger.refusedOutside {
		t.Errorf("refused for the database outside the disk-full window: %s", r)
	}
	window := "not run (no tmpfs)"
	if disk.mounted {
		window = fmt.Sprintf("%s from %s", ledger.windowEnd.Sub(ledger.windowStart).Round(time.Millisecond), ledger.windowStart.Format(time.TimeOnly))
	}
	t.Logf("soak figures: %d accepted sends (ended %v), %d forks, disk-full window %s: %d sends refused (storage_unavailable; %d of them ran all the same) and %d fork attempts (storage_unavailable or agent.fork_persistence_failed); database %d KiB; %s",
		len(ledger.turns), ended, n, window, ledger.refusedSends, ran, ledger.refusedForks, disk.dbBytes()>>10, time.Since(began).Round(time.Second))

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

	// The next start settles what the window left unfinished: no fork
	// journal entry is pending or forked; a refused fork's is failed (no
	// thread), archived, or orphaned (its thread listed by `tuttid orphans`
	// for `tuttid orphans clean`: the update that would have said archived
	// may have met the full disk too, and a start does not revisit it).
	if unfinished > 0 {
		h.stop()
		h2 := startServer(t, harnessOpts{dbPath: h.dbPath, model: h.model, home: h.home})
		for _, e := range h2.srv.Store.Client.ForkJournal.Query().Where(forkjournal.StateNEQ(forkjournal.StateDone)).AllX(ctx) {
			t.Logf("after a restart, fork journal entry %d (request %s) is %s: %s", e.ID, e.RequestID, e.State, e.Error)
			if e.State == forkjournal.StatePending || e.State == forkjournal.StateForked {
				t.Errorf("fork journal entry %d (request %s) is %s after a restart: %s", e.ID, e.RequestID, e.State, e.Error)
			}
		}
	}
}

// soakSend starts a turn and waits until it ended and the session is
// idle, without failing the test from a worker goroutine. It answers nil
// for a send refused as storage_unavailable; a turn that ended FAILED or
// INTERRUPTED is returned with its reason (the caller checks it has one).
func soakSend(h *harness, ws, id, text string) (*soakTurn, error) {
	var out struct{ SendMessage struct{ ID string } }
	if errs := h.do(`mutation($in: SendMessageInput!) { sendMessage(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": id, "text": text}}, &out); len(errs) > 0 {
		if len(errs) == 1 && errs[0].Code() == "storage_unavailable" {
			return nil, nil
		}
		return nil, fmt.Errorf("send %q: %+v", text, errs)
	}
	deadline := time.Now().Add(time.Minute)
	last := ""
	for time.Now().Before(deadline) {
		var s struct {
			Session *struct {
				Status string
				Turns  []struct {
					ID, Status string
					Error      *string
					Messages   []struct{ Role, Text string }
				}
			}
		}
		// The latest turns only: the long soak's sessions pass the 500 turns
		// an unpaged list answers (result_too_large). A turn is matched by
		// its id or by its text (the id a send answers may be the pending
		// one, replaced by Codex's).
		if errs := h.do(`query($ws: ID!, $id: ID!) { session(workspaceId: $ws, id: $id) { status turns(last: 5) { id status error messages { role text } } } }`,
			map[string]any{"ws": ws, "id": id}, &s); len(errs) > 0 {
			return nil, fmt.Errorf("read %s: %+v", id, errs)
		}
		for _, tr := range s.Session.Turns {
			mine := tr.ID == out.SendMessage.ID
			for _, m := range tr.Messages {
				mine = mine || (m.Role == "user" && m.Text == text)
			}
			if !mine {
				continue
			}
			last = tr.Status + " in a " + s.Session.Status + " session"
			if tr.Status != "IN_PROGRESS" && (s.Session.Status == "READY" || s.Session.Status == "COMPLETED") {
				st := &soakTurn{session: id, text: text, turnID: out.SendMessage.ID, status: tr.Status}
				if tr.Error != nil {
					st.reason = *tr.Error
				}
				return st, nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil, fmt.Errorf("turn %q (%s) did not end in a minute: last seen %q", text, out.SendMessage.ID, last)
}

// soakTruncateWAL runs a TRUNCATE checkpoint on the server's database,
// trying again while readers or writers keep it busy (a few seconds at
// most); nil when the WAL was emptied.
func soakTruncateWAL(h *harness) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		var busy, frames, done int
		if err := h.srv.Store.DB.QueryRow("PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &frames, &done); err != nil {
			return err
		}
		if busy == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the WAL stayed busy (%d of %d frames copied)", done, frames)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// soakAwaitIdle waits until a session is idle (READY or COMPLETED).
func soakAwaitIdle(h *harness, ws, id string) error {
	deadline := time.Now().Add(time.Minute)
	status := ""
	for time.Now().Before(deadline) {
		var s struct{ Session *struct{ Status string } }
		if errs := h.do(`query($ws: ID!, $id: ID!) { session(workspaceId: $ws, id: $id) { status } }`,
			map[string]any{"ws": ws, "id": id}, &s); len(errs) > 0 {
			return fmt.Errorf("read %s: %+v", id, errs)
		}
		if status = s.Session.Status; status == "READY" || status == "COMPLETED" {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("session %s still %s after a minute", id, status)
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
