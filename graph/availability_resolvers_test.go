package graph_test

import (
	"sync"
	"testing"
	"time"

	"github.com/99designs/gqlgen/client"

	"tuttid/activity"
	"tuttid/agent/agenttest"
	"tuttid/fork"
	"tuttid/graph"
	"tuttid/instance"
	"tuttid/session"
	"tuttid/sessionread"
	"tuttid/store/storetest"
)

// AgentSession.available and unavailableReason, and
// Workspace.unavailableSessions, come from the instance registry: the
// sessions of an instance whose heartbeat is older than DownAfter are
// unavailable, with the reason; the answering instance's never are.
func TestAvailabilityFields(t *testing.T) {
	db := storetest.New(t)
	var mu sync.Mutex
	now := storetest.SeedTime()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	a := instance.New(instance.Config{Client: db.Client, ID: "a", AdvertiseURL: "http://127.0.0.1:1", Now: clock})
	b := instance.New(instance.Config{Client: db.Client, ID: "b", AdvertiseURL: "http://127.0.0.1:2", Now: clock})
	db.Workspace(storetest.Workspace{ID: "w"})
	db.Sessions(storetest.Session{ID: "on-a", Workspace: "w", CreatedAt: now})
	if err := a.Register(t.Context(), false); err != nil { // a takes on-a
		t.Fatal(err)
	}
	db.Sessions(storetest.Session{ID: "on-b", Workspace: "w", CreatedAt: now.Add(time.Second)})
	if err := b.Register(t.Context(), false); err != nil { // b takes on-b
		t.Fatal(err)
	}
	rt := agenttest.Idle()
	broker := activity.New(activity.Options{})
	t.Cleanup(broker.Close)
	sessions := session.New(session.Config{Store: db.Store, Runtime: rt, Publisher: broker})
	forks := fork.New(fork.Config{Store: db.Store, Sessions: sessions, Runtime: rt})
	c := client.New(graph.NewHandler(graph.HandlerConfig{Sessions: sessions, Reads: sessionread.New(sessionread.Config{Store: db.Store, Subscriber: broker}), Forks: forks, Instances: b}))

	type view struct {
		Workspace struct {
			UnavailableSessions []struct{ AgentSessionID, Reason string }
			Sessions            struct {
				Edges []struct {
					Node struct {
						ID                string
						Available         bool
						UnavailableReason *string
					}
				}
			}
		}
	}
	read := func() view {
		var v view
		c.MustPost(`{ workspace(id: "w") { unavailableSessions { agentSessionId reason }
			sessions(first: 10) { edges { node { id available unavailableReason } } } } }`, &v)
		return v
	}
	v := read()
	if len(v.Workspace.UnavailableSessions) != 0 {
		t.Errorf("every instance up: unavailableSessions %+v, want none", v.Workspace.UnavailableSessions)
	}
	for _, e := range v.Workspace.Sessions.Edges {
		if !e.Node.Available || e.Node.UnavailableReason != nil {
			t.Errorf("every instance up: %+v, want available", e.Node)
		}
	}

	mu.Lock()
	now = now.Add(instance.DownAfter + 5*time.Second) // neither renews: b answers, so b is up
	mu.Unlock()
	v = read()
	const why = "instance a is down: last heartbeat 20s ago"
	if u := v.Workspace.UnavailableSessions; len(u) != 1 || u[0].AgentSessionID != "on-a" || u[0].Reason != why {
		t.Errorf("a down: unavailableSessions %+v, want on-a: %q", u, why)
	}
	for _, e := range v.Workspace.Sessions.Edges {
		wantOK := e.Node.ID == "on-b"
		if e.Node.Available != wantOK || (wantOK != (e.Node.UnavailableReason == nil)) || (!wantOK && *e.Node.UnavailableReason != why) {
			t.Errorf("a down: %s available %v reason %v", e.Node.ID, e.Node.Available, e.Node.UnavailableReason)
		}
	}
}
