package instance_test

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"tuttid/apperr"
	"tuttid/ent/agentsession"
	"tuttid/instance"
	"tuttid/store/storetest"
)

func TestDefaults(t *testing.T) {
	host, _ := os.Hostname()
	for _, tc := range []struct{ addr, id, url string }{
		{"127.0.0.1:8080", host + ":8080", "http://127.0.0.1:8080"},
		{"0.0.0.0:9090", host + ":9090", "http://127.0.0.1:9090"},
		{"[::]:9090", host + ":9090", "http://127.0.0.1:9090"},
		{":7000", host + ":7000", "http://127.0.0.1:7000"},
		{"build1.example:8080", host + ":8080", "http://build1.example:8080"},
	} {
		if got := instance.DefaultID(tc.addr); got != tc.id {
			t.Errorf("DefaultID(%q) = %q, want %q", tc.addr, got, tc.id)
		}
		if got := instance.DefaultAdvertiseURL(tc.addr); got != tc.url {
			t.Errorf("DefaultAdvertiseURL(%q) = %q, want %q", tc.addr, got, tc.url)
		}
	}
}

func TestCheckAdvertiseURL(t *testing.T) {
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"http://10.0.0.2:8080", true},
		{"https://tuttid-a.internal/base", true},
		{"ftp://host", false},
		{"http://", false},
		{"http://user:pw@host:8080", false},
		{"http://host:8080/?x=1", false},
		{"host:8080", false},
	} {
		if err := instance.CheckAdvertiseURL(tc.url); (err == nil) != tc.ok {
			t.Errorf("CheckAdvertiseURL(%q) = %v, want ok %v", tc.url, err, tc.ok)
		}
	}
}

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// An instance is alive while its heartbeat is at most DownAfter old, as
// any other instance sees it; List counts the sessions each owns.
func TestLivenessAndList(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	clk := &clock{t: storetest.SeedTime()}
	a := instance.New(instance.Config{Client: st.Client, ID: "a", AdvertiseURL: "http://10.0.0.1:8080/", Now: clk.now})
	b := instance.New(instance.Config{Client: st.Client, ID: "b", AdvertiseURL: "http://tuttid-b.internal:8080", Now: clk.now})
	st.Workspace(storetest.Workspace{ID: "w"})
	st.Sessions(storetest.Session{ID: "s1", Workspace: "w"}, storetest.Session{ID: "s2", Workspace: "w"})
	if err := a.Register(ctx, false); err != nil { // takes the sessions no instance owns
		t.Fatal(err)
	}
	if err := b.Register(ctx, false); err != nil {
		t.Fatal(err)
	}
	info, err := b.Get(ctx, "a")
	if err != nil || !info.Alive || info.AdvertiseURL != "http://10.0.0.1:8080" {
		t.Fatalf("b sees a as %+v, %v", info, err)
	}
	clk.add(instance.DownAfter)
	if info, _ := b.Get(ctx, "a"); !info.Alive {
		t.Errorf("a is down at exactly DownAfter")
	}
	clk.add(time.Second)
	if info, _ := b.Get(ctx, "a"); info.Alive {
		t.Errorf("a is alive %s after its last heartbeat", instance.DownAfter+time.Second)
	}
	if _, err := b.Get(ctx, "nobody"); apperr.CodeOf(err) != apperr.SessionUnavailable {
		t.Errorf("an unknown instance: %v, want agent.session_unavailable", err)
	}
	list, err := instance.List(ctx, st.Client, clk.now())
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != "a" || list[0].Sessions != 2 || list[1].ID != "b" || list[1].Sessions != 0 {
		t.Errorf("List = %+v, want a owning 2 sessions, b none", list)
	}
	// Both instances' advertise hosts are allowed hosts (forwarded requests
	// carry them).
	for _, h := range []string{"10.0.0.1", "tuttid-b.internal"} {
		if !a.AllowsHost(h) && !b.AllowsHost(h) {
			t.Errorf("advertise host %s not allowed", h)
		}
	}
	if !b.AllowsHost("10.0.0.1") || !b.AllowsHost("tuttid-b.internal") || b.AllowsHost("evil.example") {
		t.Errorf("b's allowed instance hosts are wrong")
	}
}

// On SQLite the one instance owns everything, whatever id an earlier run
// had (--addr's port changed, so did the default id).
func TestRegisterClaimAll(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	st.Workspace(storetest.Workspace{ID: "w"})
	st.Sessions(storetest.Session{ID: "s1", Workspace: "w"}, storetest.Session{ID: "s2", Workspace: "w"})
	if err := st.Client.AgentSession.Update().Where(agentsession.ID("s1")).SetInstanceID("host:8080").Exec(ctx); err != nil {
		t.Fatal(err)
	}
	shared := instance.New(instance.Config{Client: st.Client, ID: "other"})
	if err := shared.Register(ctx, false); err != nil {
		t.Fatal(err)
	}
	if got := st.Client.AgentSession.GetX(ctx, "s1").InstanceID; got != "host:8080" {
		t.Errorf("a shared registration took another's session: owner %q", got)
	}
	one := instance.New(instance.Config{Client: st.Client, ID: "host:9090"})
	if err := one.Register(ctx, true); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"s1", "s2"} {
		if got := st.Client.AgentSession.GetX(ctx, id).InstanceID; got != "host:9090" {
			t.Errorf("session %s owned by %q after claimAll, want host:9090", id, got)
		}
	}
}

// Run renews the heartbeat until its context ends.
func TestRunRenews(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a heartbeat")
	}
	ctx, cancel := context.WithCancel(context.Background())
	st := storetest.New(t)
	r := instance.New(instance.Config{Client: st.Client, ID: "a", AdvertiseURL: "http://127.0.0.1:1"})
	if err := r.Register(ctx, false); err != nil {
		t.Fatal(err)
	}
	first := st.Client.Instance.GetX(ctx, "a").HeartbeatAt
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	deadline := time.Now().Add(instance.HeartbeatEvery * 3)
	for !st.Client.Instance.GetX(ctx, "a").HeartbeatAt.After(first) {
		if time.Now().After(deadline) {
			t.Fatal("heartbeat not renewed")
		}
		time.Sleep(100 * time.Millisecond)
	}
	cancel()
	<-done
	if err := r.SetAdvertiseURL(context.Background(), "http://127.0.0.1:2/"); err != nil {
		t.Fatal(err)
	}
	if got := st.Client.Instance.GetX(context.Background(), "a").AdvertiseURL; !strings.HasSuffix(got, ":2") {
		t.Errorf("advertise URL %q after SetAdvertiseURL", got)
	}
}
