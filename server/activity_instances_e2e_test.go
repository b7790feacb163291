package server_test

import (
	"slices"
	"testing"
	"time"

	"tuttid/store/pgtest"
)

// TestActivityAcrossInstances: two tuttid servers on one PostgreSQL
// database, each with its own Codex. A turn run on A reaches a subscriber
// on B as it reaches one on A: the same events, the same seqs, without gap
// or duplicate; and afterSeq taken from A resumes on B.
func TestActivityAcrossInstances(t *testing.T) {
	db := pgtest.URL(t)
	a := startServer(t, harnessOpts{dbPath: db})
	b := startServer(t, harnessOpts{dbPath: db})
	ws := a.createWorkspace("shared")

	onA := a.ws(wsProtocols[0]).subscribe(activityQuery, activityVars(ws, "", 0))
	afterA := a.awaitLive(onA, ws)
	// B subscribes from A's seq: with one sequence it accepts it
	// (SUBSCRIBED at afterA) and then delivers what A does. Subscribing
	// live on both raced with events between the two subscriptions: a
	// Codex start-up warning of either instance goes to every workspace
	// whenever its app-server starts (under load, after A subscribed).
	onB := b.ws(wsProtocols[0]).subscribe(activityQuery, activityVars(ws, "", afterA))
	afterB := b.mustSubscribed(onB, ws, "", afterA)

	s := a.startSession(ws, "on A")
	turnID := a.send(ws, s.ID, "hello from A")
	gotA := mustReadUntil(t, onA, turnDone(s.ID, turnID))
	gotB := mustReadUntil(t, onB, turnDone(s.ID, turnID))
	checkContiguous(t, gotA, afterA)
	checkContiguous(t, gotB, afterB)
	same := func(x, y activityEvent) bool { return x.String() == y.String() }
	if !slices.EqualFunc(gotA, gotB, same) {
		t.Fatalf("A and B saw different events:\nA:\n%sB:\n%s", lines(gotA), lines(gotB))
	}
	// Codex's start-up warnings (PROVIDER_WARNING, for every workspace)
	// may come first: either instance's app-server may start late.
	first := slices.IndexFunc(gotA, func(e activityEvent) bool { return e.Kind != "PROVIDER_WARNING" })
	if first < 0 || gotA[first].Kind != "SESSION_CREATED" {
		t.Errorf("first event of the session %v, want SESSION_CREATED:\n%s", first, lines(gotA))
	}

	// Resume on B after an event A delivered.
	mid := gotA[len(gotA)/2].Seq
	resumed := b.ws(wsProtocols[0]).subscribe(activityQuery, activityVars(ws, "", mid))
	b.mustSubscribed(resumed, ws, "", mid)
	rest := mustReadUntil(t, resumed, func(e activityEvent) bool { return e.Seq == gotA[len(gotA)-1].Seq })
	checkContiguous(t, rest, mid)
	if !slices.EqualFunc(rest, gotA[len(gotA)/2+1:], same) {
		t.Errorf("resumed on B:\n%swant:\n%s", lines(rest), lines(gotA[len(gotA)/2+1:]))
	}
}

// TestActivityAcrossInstancesPostgresRestart: PostgreSQL restarts between
// two turns run on A. Requests fail only with storage_unavailable while it
// is down, both servers recover on their own, and B's subscription, open
// throughout, gets every event of both turns without gap or duplicate
// (its LISTEN reconnected and caught up).
func TestActivityAcrossInstancesPostgresRestart(t *testing.T) {
	c := pgtest.NewCluster(t)
	a := startServer(t, harnessOpts{dbPath: c.URL()})
	b := startServer(t, harnessOpts{dbPath: c.URL()})
	ws := a.createWorkspace("shared")
	s := a.startSession(ws, "on A")
	onB := b.ws(wsProtocols[0]).subscribe(activityQuery, activityVars(ws, "", 0))
	after := b.awaitLive(onB, ws)

	first := a.send(ws, s.ID, "before the restart")
	got := mustReadUntil(t, onB, turnDone(s.ID, first))

	c.Restart(t)
	var turn string
	a.eventually("a turn started after the restart", 30*time.Second, func() bool {
		var out struct{ SendMessage struct{ ID string } }
		errs := a.do(`mutation($in: SendMessageInput!) { sendMessage(input: $in) { id } }`,
			map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": s.ID, "text": "after the restart"}}, &out)
		for _, e := range errs {
			if e.Code() != "storage_unavailable" {
				t.Fatalf("sendMessage after the restart: %+v, want storage_unavailable or success", errs)
			}
		}
		turn = out.SendMessage.ID
		return len(errs) == 0
	})
	a.waitTurn(ws, s.ID, turn, "COMPLETED")
	got = append(got, mustReadUntil(t, onB, turnDone(s.ID, turn))...)
	checkContiguous(t, got, after)
}
