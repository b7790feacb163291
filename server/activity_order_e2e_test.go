package server_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"tuttid/session"
)

// Tests of what a client may build on (issue 15): the state an event
// implies is committed before it is sent, and SUBSCRIBED says the
// subscription is live. Both under load, on both subprotocols.

const sendMutation = `mutation($in: SendMessageInput!) { sendMessage(input: $in) { id status } }`

// statusOrder follows one session's events and reports a status published
// out of order: each send's WORKING comes after the previous turn's
// TURN_COMPLETED and READY, and READY only after a TURN_COMPLETED that
// followed the last WORKING (an older READY published after a newer
// WORKING would leave a client showing an idle session that is busy).
type statusOrder struct {
	working      bool // WORKING seen, its turn not completed yet
	readyPending bool // TURN_COMPLETED seen, its READY not yet
}

func (o *statusOrder) apply(e activityEvent) error {
	switch {
	case e.Kind == "SESSION_UPDATED" && e.Session != nil && e.Session.Status == "WORKING":
		if o.readyPending {
			return fmt.Errorf("%v: WORKING published before the previous turn's READY", e)
		}
		o.working = true
	case e.Kind == "TURN_COMPLETED":
		o.working, o.readyPending = false, true
	case e.Kind == "SESSION_UPDATED" && e.Session != nil && e.Session.Status == "READY":
		if o.working {
			return fmt.Errorf("%v: READY published after a WORKING whose turn has not completed (stale)", e)
		}
		o.readyPending = false
	}
	return nil
}

// turnChains is a client that starts a turn in each session, then sends
// the next message the moment it receives a session's TURN_COMPLETED,
// until each session ran turns turns. It returns the first problem: a send
// refused (agent.session_busy above all), a gap in seq, a status published
// out of order, or a session not READY with all its turns completed at the
// end.
func turnChains(h *harness, sub *wsSub, ws string, after int64, ids []string, turns int) error {
	send := func(id string, n int) error {
		var out struct{ SendMessage struct{ ID string } }
		errs := h.do(sendMutation, map[string]any{"in": map[string]any{
			"workspaceId": ws, "agentSessionId": id, "text": fmt.Sprintf("message %d to %s", n, id),
		}}, &out)
		if len(errs) > 0 {
			return fmt.Errorf("session %s, message %d (sent on the previous TURN_COMPLETED): %s: %s", id, n, errs[0].Code(), errs[0].Message)
		}
		return nil
	}
	completed := map[string]int{}
	orders := map[string]*statusOrder{}
	for _, id := range ids {
		orders[id] = &statusOrder{}
		if err := send(id, 1); err != nil {
			return err
		}
	}
	seq := after
	for busy := len(ids); busy > 0; {
		e, err := nextEvent(sub, 30*time.Second)
		if err != nil {
			return fmt.Errorf("after %d turns: %w", len(completed), err)
		}
		if e.Seq != seq+1 {
			return fmt.Errorf("event %v after seq %d: gap or duplicate", e, seq)
		}
		seq = e.Seq
		o := orders[e.AgentSessionID]
		if o == nil {
			continue // the forks' sessions
		}
		if err := o.apply(e); err != nil {
			return err
		}
		if e.Kind == "TURN_COMPLETED" {
			if e.Turn == nil || e.Turn.Status != "COMPLETED" {
				return fmt.Errorf("%v: want the turn COMPLETED", e)
			}
			n := completed[e.AgentSessionID] + 1
			completed[e.AgentSessionID] = n
			if n == turns {
				busy--
			} else if err := send(e.AgentSessionID, n+1); err != nil {
				return err
			}
		}
		if busy == 0 {
			// Each session's last READY follows its last TURN_COMPLETED.
			for id, o := range orders {
				for o.readyPending {
					e, err := nextEvent(sub, 10*time.Second)
					if err != nil {
						return fmt.Errorf("waiting for %s's last READY: %w", id, err)
					}
					if e.Seq != seq+1 {
						return fmt.Errorf("event %v after seq %d: gap or duplicate", e, seq)
					}
					seq = e.Seq
					if p := orders[e.AgentSessionID]; p != nil {
						if err := p.apply(e); err != nil {
							return err
						}
					}
				}
			}
		}
	}
	for _, id := range ids {
		var out struct {
			Session struct {
				Status string
				Turns  []struct{ Status string }
			}
		}
		if errs := h.do(`query($ws: ID!, $id: ID!) { session(workspaceId: $ws, id: $id) { status turns { status } } }`,
			map[string]any{"ws": ws, "id": id}, &out); len(errs) > 0 {
			return fmt.Errorf("session %s: %+v", id, errs)
		}
		s := out.Session
		if s.Status != "READY" || len(s.Turns) != turns {
			return fmt.Errorf("session %s at the end: %s with %d turns, want READY with %d", id, s.Status, len(s.Turns), turns)
		}
		for i, tr := range s.Turns {
			if tr.Status != "COMPLETED" {
				return fmt.Errorf("session %s turn %d: %s", id, i, tr.Status)
			}
		}
	}
	return nil
}

// forkRound is a client that subscribes (to the workspace, and to the
// parent alone), waits for SUBSCRIBED and forks at once: both subscriptions
// must receive the fork's events, after their SUBSCRIBED seq, the
// workspace's with no gap. With turn, it then runs a turn on the child and
// checks on receipt of each event that a query already shows what it
// reports. Last, a subscription resuming with afterSeq = the SUBSCRIBED
// seq starts with SUBSCRIBED (that seq) and replays the same events.
func forkRound(t *testing.T, h *harness, proto, ws, parentID string, turn bool) {
	t.Helper()
	c := h.ws(proto)
	sub := c.subscribe(activityQuery, activityVars(ws, "", 0))
	subParent := c.subscribe(activityQuery, activityVars(ws, parentID, 0))
	after := h.awaitLive(sub, ws)
	afterParent := h.mustSubscribed(subParent, ws, parentID, 0)

	child, _, errs := h.fork(map[string]any{"workspaceId": ws, "agentSessionId": parentID, "requestId": session.NewID()})
	if len(errs) > 0 {
		t.Fatalf("fork: %+v", errs)
	}
	isForked := func(e activityEvent) bool {
		return e.Kind == "SESSION_FORKED" && e.AgentSessionID == parentID && e.Fork != nil && e.Fork.TargetAgentSessionID == child.ID
	}
	got, err := readUntil(sub, 20*time.Second, isForked)
	if err != nil {
		t.Fatalf("workspace subscription, SUBSCRIBED at %d, then: %v", after, err)
	}
	if got[0].Seq <= after {
		t.Fatalf("SUBSCRIBED seq %d is not below the first event's %v", after, got[0])
	}
	checkContiguous(t, got, after)
	if find(got, func(e activityEvent) bool { return e.Kind == "SESSION_CREATED" && e.AgentSessionID == child.ID }) < 0 {
		t.Fatalf("no SESSION_CREATED of the child %s:\n%s", child.ID, lines(got))
	}
	gotParent, err := readUntil(subParent, 20*time.Second, isForked)
	if err != nil {
		t.Fatalf("parent's subscription, SUBSCRIBED at %d, then: %v", afterParent, err)
	}
	if gotParent[0].Seq <= afterParent {
		t.Fatalf("parent's SUBSCRIBED seq %d is not below the first event's %v", afterParent, gotParent[0])
	}

	if turn {
		var out struct{ SendMessage struct{ ID string } }
		h.must(sendMutation, map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": child.ID, "text": "on the fork"}}, &out)
		turnID := out.SendMessage.ID
		done := turnDone(child.ID, turnID)
		for {
			e, err := nextEvent(sub, 20*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if e.Seq != got[len(got)-1].Seq+1 {
				t.Fatalf("event %v after %v: gap", e, got[len(got)-1])
			}
			got = append(got, e)
			if e.AgentSessionID == child.ID {
				checkOnReceipt(t, h, ws, e)
			}
			if done(e) {
				break
			}
		}
	}

	resumed := h.ws(proto).subscribe(activityQuery, activityVars(ws, "", after))
	h.mustSubscribed(resumed, ws, "", after)
	replayed, err := readUntil(resumed, 20*time.Second, func(e activityEvent) bool { return e.Seq == got[len(got)-1].Seq })
	if err != nil {
		t.Fatalf("resumed after %d: %v", after, err)
	}
	if lines(replayed) != lines(got) {
		t.Fatalf("resumed after %d:\n%s\nthe live subscription got:\n%s", after, lines(replayed), lines(got))
	}
	c.close()
}

// turnEnded reports whether s shows turn id ended.
func turnEnded(s sessionView, id string) bool {
	for _, tr := range s.Turns {
		if tr.ID == id {
			return tr.Status != "IN_PROGRESS"
		}
	}
	return false
}

// checkOnReceipt queries what e reports, the moment it arrives.
func checkOnReceipt(t *testing.T, h *harness, ws string, e activityEvent) {
	t.Helper()
	switch e.Kind {
	case "TURN_STARTED", "TURN_COMPLETED", "MESSAGE_ADDED":
	default:
		return
	}
	s := h.session(ws, e.AgentSessionID)
	switch e.Kind {
	case "TURN_STARTED":
		// WORKING, unless the turn already ended (a reader behind a loaded
		// stream queries after the turn's end): READY with the turn still
		// running is the fault.
		if s.Status != "WORKING" && !turnEnded(s, e.Turn.ID) {
			t.Errorf("on %v the session is %s, want WORKING", e, s.Status)
		}
	case "TURN_COMPLETED":
		if s.Status != "READY" {
			t.Errorf("on %v the session is %s, want READY: a send now would be refused", e, s.Status)
		}
		for _, tr := range s.Turns {
			if tr.ID == e.Turn.ID && tr.Status != e.Turn.Status {
				t.Errorf("on %v the query shows the turn %s", e, tr.Status)
			}
		}
	case "MESSAGE_ADDED":
		for _, tr := range s.Turns {
			for _, m := range tr.Messages {
				if m.ID == e.Message.ID {
					return
				}
			}
		}
		t.Errorf("on %v the query does not show the message", e)
	}
}

// TestActivityClientBuildsOnEvents, on each subprotocol, while one client
// runs 4 sessions x 50 turns back to back (sending each session's next
// message on receipt of its TURN_COMPLETED: never agent.session_busy, no
// status published out of order), another repeatedly subscribes, waits for
// SUBSCRIBED and forks: it always receives the fork's events (forkRound).
// The load is issue 15's: turns back to back, forks, and several
// subscribers (each round has three).
func TestActivityClientBuildsOnEvents(t *testing.T) {
	// Forks go on while the turns run (at least minForks, at most maxForks,
	// spread out: each fork is a Codex thread more, which slows the turns).
	const sessions, turns, minForks, maxForks = 4, 50, 4, 8
	h := startServer(t, harnessOpts{})
	for _, proto := range wsProtocols {
		t.Run(proto, func(t *testing.T) {
			h := *h
			h.t = t
			ws := h.createWorkspace(proto)
			parent := h.startSession(ws, "parent")
			h.send(ws, parent.ID, "first message") // Codex forks only a thread with a turn
			ids := make([]string, sessions)
			for i := range ids {
				ids[i] = h.startSession(ws, fmt.Sprintf("chain %d", i)).ID
			}

			start, forks := time.Now(), 0
			chains := h.ws(proto).subscribe(activityQuery, activityVars(ws, "", 0))
			after := h.awaitLive(chains, ws)
			var wg sync.WaitGroup
			var chainErr error
			wg.Go(func() { chainErr = turnChains(&h, chains, ws, after, ids, turns) })
			defer wg.Wait() // also when a fork round fails
			chainsDone := make(chan struct{})
			go func() { wg.Wait(); close(chainsDone) }()
			for i := 0; i < minForks || i < maxForks && !closed(chainsDone); i++ {
				forkRound(t, &h, proto, ws, parent.ID, i == 0)
				forks = i + 1
				time.Sleep(500 * time.Millisecond)
			}
			forksDone := time.Since(start)
			wg.Wait()
			if chainErr != nil {
				t.Fatal(chainErr)
			}
			t.Logf("%d turns sent on TURN_COMPLETED in %v; %d forks under that load in %v",
				sessions*turns, time.Since(start).Round(time.Millisecond), forks, forksDone.Round(time.Millisecond))
		})
	}
}

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
