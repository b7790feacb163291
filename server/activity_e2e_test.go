package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"tuttid/activity/pgfeed"

	"tuttid/activity"
	"tuttid/session"
)

// End-to-end tests of the `activity` subscription over a real WebSocket
// (wsclient_test.go), against the whole server with the real codex
// app-server.

const activityQuery = `subscription($ws: ID!, $s: ID, $after: Int64) {
  activity(workspaceId: $ws, agentSessionId: $s, afterSeq: $after) {
    kind seq workspaceId agentSessionId
    session { id status }
    turn { id status }
    message { id agentSessionId turnId role text status version }
    fork { sourceAgentSessionId targetAgentSessionId }
    delta messageId at
  }
}`

type activityEvent struct {
	Kind           string
	Seq            int64
	WorkspaceID    string
	AgentSessionID string
	Session        *struct{ ID, Status string }
	Turn           *struct{ ID, Status string }
	Message        *struct {
		ID, AgentSessionID, TurnID, Role, Text, Status string
		Version                                        int
	}
	Fork      *struct{ SourceAgentSessionID, TargetAgentSessionID string }
	Delta     *string
	MessageID *string
	At        time.Time
}

func (e activityEvent) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s session=%s", e.Seq, e.Kind, e.AgentSessionID)
	switch {
	case e.Fork != nil:
		fmt.Fprintf(&b, " fork=%s->%s", e.Fork.SourceAgentSessionID, e.Fork.TargetAgentSessionID)
	case e.Session != nil:
		fmt.Fprintf(&b, " status=%s", e.Session.Status)
	case e.Turn != nil:
		fmt.Fprintf(&b, " turn=%s %s", e.Turn.ID, e.Turn.Status)
	case e.Message != nil:
		fmt.Fprintf(&b, " message=%s %s %s %q", e.Message.ID, e.Message.Role, e.Message.Status, e.Message.Text)
	case e.Delta != nil:
		fmt.Fprintf(&b, " delta=%q of %v", *e.Delta, deref(e.MessageID))
	}
	return b.String()
}

func deref(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

// activityVars builds the variables; "" and 0 leave an argument out.
func activityVars(ws, sessionID string, afterSeq int64) map[string]any {
	v := map[string]any{"ws": ws}
	if sessionID != "" {
		v["s"] = sessionID
	}
	if afterSeq != 0 {
		v["after"] = afterSeq
	}
	return v
}

// nextEvent reads the next activity event. It does not fail the test, so
// that goroutines may call it.
func nextEvent(sub *wsSub, timeout time.Duration) (activityEvent, error) {
	r, ok, timedOut := sub.next(timeout)
	switch {
	case timedOut:
		return activityEvent{}, fmt.Errorf("no event within %v", timeout)
	case !ok:
		return activityEvent{}, fmt.Errorf("subscription ended")
	case len(r.Errors) > 0:
		return activityEvent{}, fmt.Errorf("subscription error: %+v", r.Errors)
	}
	var out struct{ Activity activityEvent }
	if err := json.Unmarshal(r.Data, &out); err != nil {
		return activityEvent{}, fmt.Errorf("decode %s: %w", r.Data, err)
	}
	return out.Activity, nil
}

// readUntil reads events until done returns true for one (included), each
// within timeout of the previous.
func readUntil(sub *wsSub, timeout time.Duration, done func(activityEvent) bool) ([]activityEvent, error) {
	var got []activityEvent
	for {
		e, err := nextEvent(sub, timeout)
		if err != nil {
			return got, fmt.Errorf("after %d events (%v): %w", len(got), got, err)
		}
		got = append(got, e)
		if done(e) {
			return got, nil
		}
	}
}

func mustReadUntil(t *testing.T, sub *wsSub, done func(activityEvent) bool) []activityEvent {
	t.Helper()
	got, err := readUntil(sub, 20*time.Second, done)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// turnDone is a readUntil condition: the turn ("" = the session's next
// one) has completed and the session has gone READY after the turn
// started, in either order.
func turnDone(sessionID, turnID string) func(activityEvent) bool {
	var started, completed, ready bool
	isTurn := func(e activityEvent) bool {
		return e.AgentSessionID == sessionID && e.Turn != nil && (turnID == "" || e.Turn.ID == turnID)
	}
	return func(e activityEvent) bool {
		switch {
		case e.Kind == "TURN_STARTED" && isTurn(e):
			started = true
		case started && e.Kind == "TURN_COMPLETED" && isTurn(e):
			completed = true
		case started && e.Kind == "SESSION_UPDATED" && e.AgentSessionID == sessionID && e.Session != nil && e.Session.Status == "READY":
			ready = true
		}
		return completed && ready
	}
}

// publishMarker publishes a synthetic event straight into the server's
// broker and returns its seq: subscribing with afterSeq = marker receives
// everything published after it, and markers are events no session
// causes. Its agentSessionId is empty, so no session-filtered subscription
// sees it.
func (h *harness) publishMarker(ws string) int64 {
	h.t.Helper()
	marker := activity.Event{Kind: activity.SessionUpdated, WorkspaceID: ws}
	var e activity.Event
	if f, ok := h.srv.Broker.(*pgfeed.Feed); ok {
		// The shared feed numbers an event when PostgreSQL stores it.
		var err error
		if e, err = f.PublishWait(context.Background(), marker); err != nil {
			h.t.Fatal(err)
		}
	} else {
		e = h.srv.Broker.Publish(context.Background(), marker)
	}
	if e.Seq == 0 {
		h.t.Fatal("marker not published")
	}
	return e.Seq
}

// subscribed reads the SUBSCRIBED event a subscription of ws (and
// sessionID, "" = all) starts with and returns its seq; with afterSeq
// (non-zero) that seq must be afterSeq. It does not fail the test, so that
// goroutines may call it.
func subscribed(sub *wsSub, ws, sessionID string, afterSeq int64) (int64, error) {
	e, err := nextEvent(sub, 10*time.Second)
	switch {
	case err != nil:
		return 0, fmt.Errorf("waiting for SUBSCRIBED: %w", err)
	case e.Kind != "SUBSCRIBED" || e.WorkspaceID != ws || e.AgentSessionID != sessionID ||
		e.Session != nil || e.Turn != nil || e.Message != nil || e.Fork != nil || e.Delta != nil || e.At.IsZero():
		return 0, fmt.Errorf("first event %v (%+v), want SUBSCRIBED of workspace %s session %q", e, e, ws, sessionID)
	case afterSeq != 0 && e.Seq != afterSeq:
		return 0, fmt.Errorf("SUBSCRIBED seq %d, want afterSeq %d", e.Seq, afterSeq)
	}
	return e.Seq, nil
}

// mustSubscribed is subscribed that fails the test.
func (h *harness) mustSubscribed(sub *wsSub, ws, sessionID string, afterSeq int64) int64 {
	h.t.Helper()
	seq, err := subscribed(sub, ws, sessionID, afterSeq)
	if err != nil {
		h.t.Fatal(err)
	}
	return seq
}

// awaitLive waits until a subscription of ws without afterSeq is
// registered (its SUBSCRIBED event) and returns the seq it continues
// after: every later event of the workspace has a larger one.
func (h *harness) awaitLive(sub *wsSub, ws string) int64 {
	h.t.Helper()
	return h.mustSubscribed(sub, ws, "", 0)
}

// checkContiguous: a workspace-wide subscription receives every event of
// the workspace, so its seqs go after+1, after+2, ... with no gap and no
// duplicate, and At never goes back.
func checkContiguous(t *testing.T, got []activityEvent, after int64) {
	t.Helper()
	for i, e := range got {
		if e.Seq != after+1+int64(i) {
			t.Fatalf("event %d has seq %d, want %d (gap or duplicate); events:\n%s", i, e.Seq, after+1+int64(i), lines(got))
		}
		if i > 0 && e.At.Before(got[i-1].At) {
			t.Errorf("event %d at %v is before the previous one at %v", i, e.At, got[i-1].At)
		}
	}
}

func lines(evs []activityEvent) string {
	var b strings.Builder
	for _, e := range evs {
		b.WriteString("  " + e.String() + "\n")
	}
	return b.String()
}

func find(evs []activityEvent, pred func(activityEvent) bool) int {
	for i, e := range evs {
		if pred(e) {
			return i
		}
	}
	return -1
}

// checkForkAndTurn asserts the activity of "fork parent into child, then
// run one Codex turn with userText on the child", in order:
// SESSION_CREATED (child) and SESSION_FORKED (parent -> child), TURN_STARTED,
// MESSAGE_ADDED (user), MESSAGE_ADDED (assistant), its MESSAGE_DELTAs whose
// concatenation is the assistant's final text, MESSAGE_UPDATED (assistant,
// completed), TURN_COMPLETED and, last, SESSION_UPDATED READY.
func checkForkAndTurn(t *testing.T, evs []activityEvent, ws, parentID, childID, turnID, userText string) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf(format+"\nevents:\n%s", append(args, lines(evs))...)
	}
	for _, e := range evs {
		if e.WorkspaceID != ws {
			fail("event %v of workspace %s", e, e.WorkspaceID)
		}
	}
	created := find(evs, func(e activityEvent) bool {
		return e.Kind == "SESSION_CREATED" && e.AgentSessionID == childID && e.Session != nil && e.Session.ID == childID
	})
	forked := find(evs, func(e activityEvent) bool {
		return e.Kind == "SESSION_FORKED" && e.AgentSessionID == parentID && e.Fork != nil &&
			e.Fork.SourceAgentSessionID == parentID && e.Fork.TargetAgentSessionID == childID &&
			e.Session != nil && e.Session.ID == childID
	})
	started := find(evs, func(e activityEvent) bool {
		return e.Kind == "TURN_STARTED" && e.AgentSessionID == childID && e.Turn != nil && e.Turn.ID == turnID
	})
	user := find(evs, func(e activityEvent) bool {
		return e.Kind == "MESSAGE_ADDED" && e.AgentSessionID == childID && e.Message != nil &&
			e.Message.Role == "user" && e.Message.Text == userText && e.Message.TurnID == turnID
	})
	completed := find(evs, func(e activityEvent) bool {
		return e.Kind == "TURN_COMPLETED" && e.AgentSessionID == childID && e.Turn != nil && e.Turn.ID == turnID && e.Turn.Status == "COMPLETED"
	})
	switch {
	case created < 0:
		fail("no SESSION_CREATED for the child %s", childID)
	case forked < 0:
		fail("no SESSION_FORKED %s -> %s", parentID, childID)
	case started < 0:
		fail("no TURN_STARTED for turn %s", turnID)
	case user < 0:
		fail("no MESSAGE_ADDED for the user message %q", userText)
	case completed < 0:
		fail("no TURN_COMPLETED for turn %s", turnID)
	case max(created, forked) > started:
		fail("the fork events come after TURN_STARTED")
	case user < started:
		fail("the user message comes before TURN_STARTED")
	}

	// The assistant's streamed text.
	var deltas []int
	var streamed strings.Builder
	assistantID := ""
	for i, e := range evs {
		if e.Kind != "MESSAGE_DELTA" {
			continue
		}
		if e.AgentSessionID != childID || e.Delta == nil || e.MessageID == nil {
			fail("delta %v", e)
		}
		if assistantID == "" {
			assistantID = *e.MessageID
		} else if *e.MessageID != assistantID {
			fail("deltas of two messages %s and %s", assistantID, *e.MessageID)
		}
		deltas = append(deltas, i)
		streamed.WriteString(*e.Delta)
	}
	if len(deltas) < 2 {
		fail("%d MESSAGE_DELTA events, want the reply streamed in several", len(deltas))
	}
	isAssistant := func(e activityEvent) bool {
		return (e.Kind == "MESSAGE_ADDED" || e.Kind == "MESSAGE_UPDATED") && e.Message != nil && e.Message.ID == assistantID
	}
	added := find(evs, isAssistant)
	final := -1
	for i, e := range evs {
		if isAssistant(e) {
			final = i
		}
	}
	switch {
	case added < 0 || evs[added].Kind != "MESSAGE_ADDED":
		fail("the assistant message %s is not announced by MESSAGE_ADDED", assistantID)
	case evs[added].Message.Role != "assistant" || evs[added].Message.TurnID != turnID || evs[added].Message.AgentSessionID != childID:
		fail("assistant message event %v", evs[added])
	case added > deltas[0] || user > added:
		fail("MESSAGE_ADDED of the assistant must come after the user message and before its deltas")
	case final < deltas[len(deltas)-1]:
		fail("no MESSAGE_UPDATED of the assistant message after its deltas")
	case evs[final].Message.Status != "completed" || evs[final].Message.Text != streamed.String():
		fail("final assistant message %v; the deltas concatenate to %q", evs[final], streamed.String())
	case !strings.Contains(streamed.String(), userText):
		fail("the assistant streamed %q, not the model's reply to %q", streamed.String(), userText)
	case final > completed:
		fail("the assistant message completes after TURN_COMPLETED")
	}

	// The session is READY at the end, after the turn completed.
	ready := find(evs, func(e activityEvent) bool {
		return e.Kind == "SESSION_UPDATED" && e.AgentSessionID == childID && e.Session != nil && e.Session.Status == "READY" && e.Seq > evs[started].Seq
	})
	if ready >= 0 && ready < completed {
		fail("the child went READY (seq %d) before TURN_COMPLETED (seq %d): a client refetching on READY sees the turn still IN_PROGRESS",
			evs[ready].Seq, evs[completed].Seq)
	}
	last := evs[len(evs)-1]
	if last.Kind != "SESSION_UPDATED" || last.AgentSessionID != childID || last.Session == nil || last.Session.Status != "READY" {
		fail("last event is %v, want SESSION_UPDATED %s READY", last, childID)
	}
}

// forkAndTurn forks parentID and runs a turn on the child; it returns the
// child's id and the turn's id.
func (h *harness) forkAndTurn(ws, parentID, text string) (childID, turnID string) {
	h.t.Helper()
	child, _, errs := h.fork(map[string]any{"workspaceId": ws, "agentSessionId": parentID, "requestId": session.NewID()})
	if len(errs) > 0 {
		h.t.Fatalf("fork: %+v", errs)
	}
	return child.ID, h.send(ws, child.ID, text)
}

// TestActivitySubscriptionForkAndTurn: on each subprotocol, a client
// subscribed to the workspace (live, without afterSeq) receives a fork and
// a real Codex turn as the contract orders them, with the right ids, seq
// increasing by one, the streamed deltas adding up to the stored reply; and
// stopping the subscription (complete / stop) is answered by complete.
func TestActivitySubscriptionForkAndTurn(t *testing.T) {
	h := startServer(t, harnessOpts{})
	ws := h.createWorkspace("demo")
	parent := h.startSession(ws, "Build login")
	h.send(ws, parent.ID, "first message") // Codex forks only a thread with a turn

	for _, proto := range wsProtocols {
		t.Run(proto, func(t *testing.T) {
			h := *h
			h.t = t
			c := h.ws(proto)
			sub := c.subscribe(activityQuery, activityVars(ws, "", 0))
			after := h.awaitLive(sub, ws)

			text := "hello over " + proto
			childID, turnID := h.forkAndTurn(ws, parent.ID, text)
			got := mustReadUntil(t, sub, turnDone(childID, turnID))
			checkContiguous(t, got, after)
			checkForkAndTurn(t, got, ws, parent.ID, childID, turnID, text)

			sub.stop()
			for {
				r, ok, timedOut := sub.next(5 * time.Second)
				if timedOut {
					t.Fatal("no complete after stopping the subscription")
				}
				if !ok {
					break
				}
				t.Logf("after stop: %s %v", r.Data, r.Errors)
			}
		})
	}
}

// TestActivityFilterBySession: a subscription with agentSessionId receives
// exactly that session's events (those a workspace-wide subscription on the
// same connection sees for it), and none of another session's turn.
func TestActivityFilterBySession(t *testing.T) {
	h := startServer(t, harnessOpts{})
	ws := h.createWorkspace("demo")
	a := h.startSession(ws, "A")
	b := h.startSession(ws, "B")

	c := h.ws(protoTransportWS)
	after := h.publishMarker(ws)
	onlyA := c.subscribe(activityQuery, activityVars(ws, a.ID, after))
	all := c.subscribe(activityQuery, activityVars(ws, "", after))
	h.mustSubscribed(onlyA, ws, a.ID, after)
	h.mustSubscribed(all, ws, "", after)

	turnB := h.send(ws, b.ID, "for B")
	turnA := h.send(ws, a.ID, "for A")

	everything := mustReadUntil(t, all, turnDone(a.ID, turnA))
	checkContiguous(t, everything, after)
	if find(everything, turnDone(b.ID, turnB)) < 0 {
		t.Fatalf("the workspace subscription did not see B's turn:\n%s", lines(everything))
	}
	gotA := mustReadUntil(t, onlyA, turnDone(a.ID, turnA))
	var wantA []activityEvent
	for _, e := range everything {
		if e.AgentSessionID == a.ID {
			wantA = append(wantA, e)
		}
	}
	if len(gotA) != len(wantA) {
		t.Fatalf("session subscription got %d events, want %d:\n%s\nwant:\n%s", len(gotA), len(wantA), lines(gotA), lines(wantA))
	}
	for i := range gotA {
		if gotA[i].AgentSessionID != a.ID || gotA[i].Seq != wantA[i].Seq || gotA[i].Kind != wantA[i].Kind {
			t.Fatalf("session subscription event %d = %v, want %v", i, gotA[i], wantA[i])
		}
	}
}

// TestWebSocketOriginCheck: the handshake from a foreign page is refused
// with 403, and so is one from a page of another port of this machine
// (another origin, issue 22); the server's own origin and non-browser
// clients (no Origin) are accepted and acknowledged.
func TestWebSocketOriginCheck(t *testing.T) {
	h := startServer(t, harnessOpts{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, tc := range []struct {
		origin string
		ok     bool
	}{
		{"https://evil.example", false},
		{"http://localhost.evil.example", false},
		{"http://localhost:1234", false},
		{"http://127.0.0.1:1234", false},
		{h.url, true},
		{"", true},
	} {
		header := http.Header{}
		if tc.origin != "" {
			header.Set("Origin", tc.origin)
		}
		for _, proto := range wsProtocols {
			c, resp, err := dialWS(ctx, h.wsURL(), proto, header)
			switch {
			case tc.ok && err != nil:
				t.Errorf("Origin %q, %s: refused: %v", tc.origin, proto, err)
			case tc.ok:
				c.close()
			case err == nil:
				c.close()
				t.Errorf("Origin %q, %s: accepted", tc.origin, proto)
			case resp == nil || resp.StatusCode != http.StatusForbidden:
				t.Errorf("Origin %q, %s: refused with %v (response %v), want HTTP 403", tc.origin, proto, err, resp)
			}
		}
	}
}

// TestActivityResumeAfterReconnect: a client that disconnects in the middle
// of a turn and reconnects with afterSeq = the last seq it processed gets
// exactly what it missed (the rest of that turn and a whole turn that ran
// while it was away: what an always-connected client saw, no gap, no
// duplicate), then live events.
func TestActivityResumeAfterReconnect(t *testing.T) {
	h := startServer(t, harnessOpts{})
	ws := h.createWorkspace("demo")
	s := h.startSession(ws, "resume")

	after := h.publishMarker(ws)
	witness := h.ws(protoGraphQLWS).subscribe(activityQuery, activityVars(ws, "", after))
	h.mustSubscribed(witness, ws, "", after)

	first := h.ws(protoTransportWS)
	sub := first.subscribe(activityQuery, activityVars(ws, "", after))
	h.mustSubscribed(sub, ws, "", after)
	turn1 := h.send(ws, s.ID, "before the disconnect")
	seen := mustReadUntil(t, sub, func(e activityEvent) bool { return e.Kind == "MESSAGE_DELTA" })
	checkContiguous(t, seen, after)
	last := seen[len(seen)-1].Seq
	first.close()

	turn2 := h.send(ws, s.ID, "while away")
	witnessed := mustReadUntil(t, witness, turnDone(s.ID, turn2))
	checkContiguous(t, witnessed, after)
	if find(witnessed, turnDone(s.ID, turn1)) < 0 {
		t.Fatalf("witness missed turn 1:\n%s", lines(witnessed))
	}
	var missed []activityEvent
	for _, e := range witnessed {
		if e.Seq > last {
			missed = append(missed, e)
		}
	}

	again := h.ws(protoTransportWS)
	resumed := again.subscribe(activityQuery, activityVars(ws, "", last))
	h.mustSubscribed(resumed, ws, "", last) // first, before the replay
	got := mustReadUntil(t, resumed, turnDone(s.ID, turn2))
	checkContiguous(t, got, last)
	if len(got) != len(missed) {
		t.Fatalf("resumed with %d events, missed %d:\n%s\nmissed:\n%s", len(got), len(missed), lines(got), lines(missed))
	}
	for i := range got {
		if got[i].String() != missed[i].String() {
			t.Fatalf("resumed event %d = %v, want %v", i, got[i], missed[i])
		}
	}

	// Then live events.
	live := h.startSession(ws, "after the resume")
	isCreated := func(e activityEvent) bool { return e.Kind == "SESSION_CREATED" && e.AgentSessionID == live.ID }
	w := mustReadUntil(t, witness, isCreated)
	g := mustReadUntil(t, resumed, isCreated)
	checkContiguous(t, g, got[len(got)-1].Seq)
	if len(g) != len(w) || g[len(g)-1].Seq != w[len(w)-1].Seq {
		t.Fatalf("live after resume:\n%s\nwitness:\n%s", lines(g), lines(w))
	}
}

// TestActivitySubscribeErrors: subscriptions that cannot be served end with
// a GraphQL error carrying a stable code, on both subprotocols: afterSeq
// older than the retained window or never issued (a previous server's)
// -> activity.resync_required; an unknown workspace or session -> not found.
func TestActivitySubscribeErrors(t *testing.T) {
	h := startServer(t, harnessOpts{})
	ws := h.createWorkspace("demo")
	latest := h.publishMarker(ws)
	for _, proto := range wsProtocols {
		c := h.ws(proto)
		for _, tc := range []struct {
			name string
			vars map[string]any
			code string
		}{
			{"afterSeq far in the past", activityVars(ws, "", 1), "activity.resync_required"},
			{"afterSeq never issued", activityVars(ws, "", latest+1000), "activity.resync_required"},
			{"unknown workspace", activityVars("no-such-workspace", "", 0), "agent.workspace_not_found"},
			{"unknown session", activityVars(ws, "no-such-session", 0), "agent.session_not_found"},
		} {
			sub := c.subscribe(activityQuery, tc.vars)
			r, ok, timedOut := sub.next(5 * time.Second)
			switch {
			case timedOut || !ok:
				t.Errorf("%s, %s: no answer (timed out %v)", proto, tc.name, timedOut)
				continue
			case len(r.Errors) != 1 || r.Errors[0].Code() != tc.code:
				t.Errorf("%s, %s: data %s errors %+v, want one error with code %s", proto, tc.name, r.Data, r.Errors, tc.code)
			case strings.Contains(r.Errors[0].Message, "goroutine") || r.Errors[0].Message == "":
				t.Errorf("%s, %s: message %q", proto, tc.name, r.Errors[0].Message)
			}
			if _, ok, timedOut := sub.next(5 * time.Second); ok || timedOut {
				t.Errorf("%s, %s: the subscription did not end after its error", proto, tc.name)
			}
		}
	}
}

// TestWebSocketKeepAlive: the legacy graphql-ws server sends `ka` right
// after connection_ack (then every 10 s); on graphql-transport-ws the
// server answers a client ping with pong.
func TestWebSocketKeepAlive(t *testing.T) {
	h := startServer(t, harnessOpts{})
	waitControl := func(c *wsClient, typ string) {
		t.Helper()
		timer := time.NewTimer(5 * time.Second)
		defer timer.Stop()
		for {
			select {
			case f := <-c.control:
				if f.Type == typ {
					return
				}
			case <-timer.C:
				t.Fatalf("%s: no %s", c.proto, typ)
			}
		}
	}
	waitControl(h.ws(protoGraphQLWS), "ka")

	c := h.ws(protoTransportWS)
	if err := c.write(wsFrame{Type: "ping"}); err != nil {
		t.Fatal(err)
	}
	waitControl(c, "pong")
}

// bigQuery subscribes with n aliases of workspaceId, so that each event is
// about 48*n bytes: a client that stops reading fills its TCP buffers with
// a few dozen events.
func bigQuery(n int) string {
	var b strings.Builder
	b.WriteString(`subscription($ws: ID!, $s: ID, $after: Int64) { activity(workspaceId: $ws, agentSessionId: $s, afterSeq: $after) { kind seq workspaceId agentSessionId at`)
	for i := range n {
		fmt.Fprintf(&b, " f%d: workspaceId", i)
	}
	b.WriteString(" } }")
	return b.String()
}

// goroutinesSettled closes the idle HTTP connections of the test's client
// and returns runtime.NumGoroutine once it stops changing.
func goroutinesSettled() int {
	http.DefaultClient.CloseIdleConnections()
	n := runtime.NumGoroutine()
	for range 40 {
		time.Sleep(50 * time.Millisecond)
		m := runtime.NumGoroutine()
		if m == n {
			return n
		}
		n = m
	}
	return n
}

// TestActivityManySubscribersAndAStalledOne: 200 WebSocket subscribers on
// one workspace (half per subprotocol) each receive every event of a fork
// and a Codex turn, within seconds, although another subscriber of the same
// workspace has stopped reading and its connection is backed up; the
// stalled one catches up on everything once it reads again (it was behind
// by fewer than the broker's buffer, so it is not dropped); once all
// disconnect, the goroutines return to their level before.
func TestActivityManySubscribersAndAStalledOne(t *testing.T) {
	const n = 200
	h := startServer(t, harnessOpts{})
	ws := h.createWorkspace("demo")
	parent := h.startSession(ws, "many")
	h.send(ws, parent.ID, "first message")
	baseline := goroutinesSettled()

	// The stalled subscriber: registered, then stops reading while ~14 MB
	// of events (its copy) pile up: more than the TCP buffers hold, so the
	// server's writes to it block, and fewer events than activity's
	// DefaultBuffer, so the broker keeps it.
	stalled := h.ws(protoTransportWS)
	stalledSub := stalled.subscribe(bigQuery(2000), activityVars(ws, "", 0))
	stalledAfter := h.awaitLive(stalledSub, ws)
	stalled.pause()
	for range 150 {
		h.publishMarker(ws)
	}

	after := h.publishMarker(ws)
	clients := make([]*wsClient, n)
	subs := make([]*wsSub, n)
	var dial sync.WaitGroup
	for i := range n {
		dial.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			c, _, err := dialWS(ctx, h.wsURL(), wsProtocols[i%2], nil)
			if err != nil {
				t.Errorf("client %d: %v", i, err)
				return
			}
			c.t = t
			c.run()
			clients[i] = c
			subs[i] = c.subscribe(activityQuery, activityVars(ws, "", after))
		})
	}
	dial.Wait()
	defer func() {
		for _, c := range clients {
			if c != nil {
				c.close()
			}
		}
	}()
	if t.Failed() {
		t.FailNow()
	}

	forkAt := time.Now()
	child, _, errs := h.fork(map[string]any{"workspaceId": ws, "agentSessionId": parent.ID, "requestId": session.NewID()})
	if len(errs) > 0 {
		t.Fatalf("fork: %+v", errs)
	}
	results := make([][]activityEvent, n)
	finished := make([]time.Time, n)
	var read sync.WaitGroup
	for i := range n {
		read.Go(func() {
			if _, err := subscribed(subs[i], ws, "", after); err != nil {
				t.Errorf("client %d (%s): %v", i, clients[i].proto, err)
				return
			}
			got, err := readUntil(subs[i], 20*time.Second, turnDone(child.ID, ""))
			if err != nil {
				t.Errorf("client %d (%s): %v", i, clients[i].proto, err)
				return
			}
			results[i], finished[i] = got, time.Now()
		})
	}
	turnID := h.send(ws, child.ID, "to all")
	turnDoneAt := time.Now()
	read.Wait()
	if t.Failed() {
		t.FailNow()
	}

	// The order within a fork and a turn is TestActivitySubscriptionForkAndTurn's
	// business; here every client must have the whole of it.
	checkContiguous(t, results[0], after)
	for _, want := range []func(activityEvent) bool{
		func(e activityEvent) bool { return e.Kind == "SESSION_CREATED" && e.AgentSessionID == child.ID },
		func(e activityEvent) bool {
			return e.Kind == "SESSION_FORKED" && e.Fork != nil && e.Fork.TargetAgentSessionID == child.ID
		},
		func(e activityEvent) bool { return e.Kind == "TURN_STARTED" && e.Turn != nil && e.Turn.ID == turnID },
		func(e activityEvent) bool { return e.Kind == "MESSAGE_DELTA" && e.AgentSessionID == child.ID },
		func(e activityEvent) bool { return e.Kind == "TURN_COMPLETED" && e.Turn != nil && e.Turn.ID == turnID },
	} {
		if find(results[0], want) < 0 {
			t.Fatalf("client 0 is missing an event of the fork or the turn:\n%s", lines(results[0]))
		}
	}
	last := forkAt
	for i := range n {
		if got, want := lines(results[i]), lines(results[0]); got != want {
			t.Fatalf("client %d received\n%s\nclient 0 received\n%s", i, got, want)
		}
		if finished[i].After(last) {
			last = finished[i]
		}
	}
	t.Logf("%d subscribers: %d events each; the turn completed %v after the fork started, the last subscriber finished %v after it",
		n, len(results[0]), turnDoneAt.Sub(forkAt), last.Sub(forkAt))
	if late := last.Sub(turnDoneAt); late > 5*time.Second {
		t.Errorf("the slowest subscriber finished %v after the turn completed", late)
	}

	// The stalled subscriber reads again and receives everything, in order.
	stalled.resume()
	caughtUp, err := readUntil(stalledSub, 15*time.Second, func(e activityEvent) bool {
		return e.Seq == results[0][len(results[0])-1].Seq
	})
	if err != nil {
		t.Fatalf("stalled subscriber: %v", err)
	}
	checkContiguous(t, caughtUp, stalledAfter)
	for i, e := range caughtUp[len(caughtUp)-len(results[0]):] {
		if e.Seq != results[0][i].Seq || e.Kind != results[0][i].Kind {
			t.Fatalf("stalled subscriber event %v, others got %v", e, results[0][i])
		}
	}

	// Everyone leaves: the goroutines of 201 connections and subscriptions end.
	stalled.close()
	var closing sync.WaitGroup
	for _, c := range clients {
		closing.Go(c.close)
	}
	closing.Wait()
	const slack = 10
	deadline := time.Now().Add(15 * time.Second)
	for {
		now := goroutinesSettled()
		if now <= baseline+slack {
			t.Logf("goroutines: %d before, %d after", baseline, now)
			break
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("goroutines: %d before, still %d after the clients left:\n%s", baseline, now, buf[:runtime.Stack(buf, true)])
		}
	}
}

// TestActivitySlowSubscriberGetsResyncRequired: a subscriber that stops
// reading while more events than the broker buffers arrive is dropped: once
// it reads again it gets the events up to the drop, then RESYNC_REQUIRED
// carrying the seq of the last one, and the subscription completes;
// resubscribing with afterSeq = that seq resumes with no gap.
func TestActivitySlowSubscriberGetsResyncRequired(t *testing.T) {
	h := startServer(t, harnessOpts{})
	ws := h.createWorkspace("demo")
	c := h.ws(protoGraphQLWS)
	sub := c.subscribe(bigQuery(2000), activityVars(ws, "", 0))
	after := h.awaitLive(sub, ws)
	c.pause()
	const total = activity.DefaultBuffer + 200
	var last int64
	for range total {
		last = h.publishMarker(ws)
	}
	c.resume()
	got := mustReadUntil(t, sub, func(e activityEvent) bool { return e.Kind == "RESYNC_REQUIRED" })
	resync := got[len(got)-1]
	got = got[:len(got)-1]
	if len(got) == 0 {
		t.Fatal("dropped before any event")
	}
	checkContiguous(t, got, after)
	if resync.Seq != got[len(got)-1].Seq || resync.WorkspaceID != ws {
		t.Fatalf("RESYNC_REQUIRED %v after %v", resync, got[len(got)-1])
	}
	if _, ok, timedOut := sub.next(5 * time.Second); ok || timedOut {
		t.Fatal("the subscription did not end after RESYNC_REQUIRED")
	}
	t.Logf("dropped after %d of %d events", len(got), total)

	again := c.subscribe(activityQuery, activityVars(ws, "", resync.Seq))
	h.mustSubscribed(again, ws, "", resync.Seq)
	rest := mustReadUntil(t, again, func(e activityEvent) bool { return e.Seq == last })
	checkContiguous(t, rest, resync.Seq)
}
