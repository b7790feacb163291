package main

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"tuttid/session"
)

// TestInstanceTurnCommittedBeforeKill: a kills itself (SIGKILL, at
// session.CrashTurnCommitted) right after it committed a turn's end and
// its session's READY, before its feed had the events. A subscriber on b,
// open throughout, gets TURN_COMPLETED (COMPLETED) and SESSION_UPDATED
// (READY) of that turn once a is back (they waited in the outbox), each
// once, in order, without a gap in the seqs. Before the outbox they were
// lost: the change was committed, its events only in a's memory.
func TestInstanceTurnCommittedBeforeKill(t *testing.T) {
	c := newCluster(t)
	b := c.start("b")
	ws := c.workspace(b)
	a := c.start("a", "TUTTID_CRASH_AT="+session.CrashTurnCommitted)
	var s struct{ StartSession struct{ ID string } }
	a.must(`mutation($in: StartSessionInput!) { startSession(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "title": "on a"}}, &s)
	sid := s.StartSession.ID

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	onB, subscribed := subscribeKinds(t, ctx, b.url, ws)
	a.send(ws, sid, "hello")
	a.waitExit(60 * time.Second)

	got := []kindEvent{}
	wait := func(what string, d time.Duration, done func() bool) {
		t.Helper()
		deadline := time.After(d)
		for !done() {
			select {
			case e, ok := <-onB:
				if !ok {
					t.Fatalf("b's subscription ended waiting for %s; got %v", what, got)
				}
				got = append(got, e)
			case <-deadline:
				t.Fatalf("no %s on b within %s; got %v", what, d, got)
			}
		}
	}
	// ended counts the session's TURN_COMPLETED events, at is the first.
	ended := func() (n, at int) {
		at = -1
		for i, e := range got {
			if e.Kind == "TURN_COMPLETED" && e.Session == sid {
				if n++; n == 1 {
					at = i
				}
			}
		}
		return n, at
	}
	// What a published before its death arrives; its turn's end does not.
	time.Sleep(2 * time.Second)
	wait("a's events before its death", 100*time.Millisecond, func() bool { return len(onB) == 0 })
	if n, _ := ended(); n != 0 {
		t.Fatalf("TURN_COMPLETED reached b before a's restart: %v", got)
	}

	a = c.start("a")
	wait("TURN_COMPLETED and READY after a's restart", 60*time.Second, func() bool {
		_, at := ended()
		return at >= 0 && len(got) > at+1
	})
	a.waitSession(ws, sid, "turn done", idle)
	time.Sleep(time.Second) // a duplicate would come now
	wait("nothing more", 100*time.Millisecond, func() bool { return len(onB) == 0 })

	// (The restarted a's Codex may add a PROVIDER_WARNING.)
	n, i := ended()
	if end, ready := got[i], got[i+1]; end.Turn != "COMPLETED" || n != 1 ||
		ready.Kind != "SESSION_UPDATED" || ready.Status != "READY" || ready.Session != sid {
		t.Errorf("b's last events %v, %v (all: %v); want TURN_COMPLETED (COMPLETED) once, then SESSION_UPDATED (READY)", end, ready, got)
	}
	for j, e := range got {
		if e.Seq != subscribed+int64(j)+1 {
			t.Fatalf("b's event %d has seq %d, want %d (a gap or a duplicate): %v", j, e.Seq, subscribed+int64(j)+1, got)
		}
	}
}

// kindEvent is an activity event as the test reads it.
type kindEvent struct {
	Kind    string
	Seq     int64
	Session string // agentSessionId
	Turn    string // the turn's status, if any
	Status  string // the session's status, if any
}

func (e kindEvent) String() string {
	return fmt.Sprintf("%d %s %s %s%s", e.Seq, e.Kind, e.Session, e.Turn, e.Status)
}

// subscribeKinds subscribes to workspace ws's activity on base and returns
// the events after SUBSCRIBED (the channel closes when the subscription
// ends) and SUBSCRIBED's seq.
func subscribeKinds(t *testing.T, ctx context.Context, base, ws string) (<-chan kindEvent, int64) {
	t.Helper()
	c, err := dialGraphQL(ctx, base, "graphql-transport-ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.subscribe(ctx, "subscribe", "1", `subscription($ws: ID!) { activity(workspaceId: $ws) {
		kind seq agentSessionId turn { status } session { status } } }`, map[string]any{"ws": ws}); err != nil {
		t.Fatal(err)
	}
	out := make(chan kindEvent, 1024)
	subscribed := make(chan int64, 1)
	go func() {
		defer close(out)
		defer c.close()
		for {
			f, err := c.read(ctx)
			if err != nil {
				return
			}
			switch f.Type {
			case "ping":
				_ = c.send(ctx, gqlFrame{Type: "pong"})
			case "next":
				var p struct {
					Data struct {
						Activity struct {
							Kind, AgentSessionID string
							Seq                  int64
							Turn, Session        *struct{ Status string }
						}
					}
				}
				if json.Unmarshal(f.Payload, &p) != nil {
					return
				}
				a := p.Data.Activity
				if a.Kind == "SUBSCRIBED" {
					subscribed <- a.Seq
					continue
				}
				e := kindEvent{Kind: a.Kind, Seq: a.Seq, Session: a.AgentSessionID}
				if a.Turn != nil {
					e.Turn = a.Turn.Status
				}
				if a.Session != nil {
					e.Status = a.Session.Status
				}
				out <- e
			default:
				return
			}
		}
	}()
	select {
	case seq := <-subscribed:
		return out, seq
	case <-time.After(30 * time.Second):
		t.Fatal("no SUBSCRIBED within 30s")
	}
	return nil, 0
}
