// Package instance is the registry of the tuttid instances that share one
// database: each registers itself with the URL at which the others reach
// it, renews a heartbeat, and is taken for down when its heartbeat is old.
// A session belongs to the instance whose Codex holds its thread
// (AgentSession.instance_id); the registry says where that instance is and
// whether it is alive.
package instance

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/ent/forkjournal"
	entinstance "tuttid/ent/instance"
)

const (
	// HeartbeatEvery is how often an instance renews its heartbeat.
	HeartbeatEvery = 5 * time.Second
	// DownAfter is the age of a heartbeat after which its instance is
	// down: three heartbeats missed.
	DownAfter = 15 * time.Second
)

// DefaultID is the instance id when none is given: the host name and the
// port of the listen address ("build1:8080").
func DefaultID(addr string) string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		return host
	}
	return host + ":" + port
}

// DefaultAdvertiseURL is the advertise URL when none is given: http:// and
// the listen address (a listener on every interface is reached on
// loopback).
func DefaultAdvertiseURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// CheckAdvertiseURL refuses an advertise URL the others could not use: not
// http(s), no host, or carrying a query, fragment or user info.
func CheckAdvertiseURL(u string) error {
	p, err := url.Parse(u)
	if err != nil {
		return fmt.Errorf("%q is not a URL", u)
	}
	if p.Scheme != "http" && p.Scheme != "https" {
		return fmt.Errorf("%q: the scheme must be http or https", u)
	}
	if p.Host == "" || p.User != nil || p.RawQuery != "" || p.Fragment != "" {
		return fmt.Errorf("%q: want scheme://host[:port][/path] without user, query or fragment", u)
	}
	return nil
}

// Info is one registered instance as the registry sees it.
type Info struct {
	ID           string    `json:"id"`
	AdvertiseURL string    `json:"advertiseUrl"`
	StartedAt    time.Time `json:"startedAt"`
	HeartbeatAt  time.Time `json:"lastHeartbeat"`
	// Alive: the heartbeat is at most DownAfter old.
	Alive bool `json:"alive"`
	// Sessions is how many sessions it owns.
	Sessions int `json:"sessionsOwned"`
}

// Registry is this instance's entry in the database and its view of the
// others.
type Registry struct {
	client *ent.Client
	id     string
	log    *slog.Logger
	now    func() time.Time

	mu    sync.Mutex
	url   string          // this instance's advertise URL
	hosts map[string]bool // advertise hosts of the registered instances

	liveMu sync.Mutex // held across the read: one read at a time
	live   *liveness
}

// Config configures a Registry.
type Config struct {
	Client       *ent.Client
	ID           string
	AdvertiseURL string
	Logger       *slog.Logger
	// Now is the clock (tests); time.Now when nil.
	Now func() time.Time
}

// New returns the registry of cfg.ID; Register makes its entry.
func New(cfg Config) *Registry {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	return &Registry{client: cfg.Client, id: cfg.ID, url: strings.TrimRight(cfg.AdvertiseURL, "/"), log: log, now: now,
		hosts: map[string]bool{}}
}

// ID is this instance's id.
func (r *Registry) ID() string { return r.id }

// Register writes this instance's entry (a restart keeps its id and renews
// the entry) and gives the sessions no instance owns yet, made by a tuttid
// before instances existed, to this one. With claimAll (SQLite: one
// instance per database) every session and journal entry becomes this
// instance's, whatever id an earlier run had.
func (r *Registry) Register(ctx context.Context, claimAll bool) error {
	now := r.now()
	err := r.client.Instance.Create().SetID(r.id).SetAdvertiseURL(r.url).
		SetStartedAt(now).SetHeartbeatAt(now).
		OnConflictColumns(entinstance.FieldID).
		UpdateAdvertiseURL().UpdateStartedAt().UpdateHeartbeatAt().
		Exec(ctx)
	if err != nil {
		return apperr.Storage(err, "register this instance")
	}
	sessions := r.client.AgentSession.Update().SetInstanceID(r.id)
	journal := r.client.ForkJournal.Update().SetInstanceID(r.id)
	if claimAll {
		sessions.Where(agentsession.InstanceIDNEQ(r.id))
		journal.Where(forkjournal.InstanceIDNEQ(r.id))
	} else {
		sessions.Where(agentsession.InstanceID(""))
		journal.Where(forkjournal.InstanceID(""))
	}
	n, err := sessions.Save(ctx)
	if err != nil {
		return apperr.Storage(err, "give this instance the sessions no instance owns")
	}
	m, err := journal.Save(ctx)
	if err != nil {
		return apperr.Storage(err, "give this instance the fork journal entries no instance wrote")
	}
	if n > 0 || m > 0 {
		r.log.InfoContext(ctx, "instance: took ownership of sessions without an owner", "instance", r.id,
			"sessions", n, "journal_entries", m)
	}
	return r.refreshHosts(ctx)
}

// SetAdvertiseURL changes where the others reach this instance: the
// default advertise URL is known only once the listener has its port
// (--addr with port 0).
func (r *Registry) SetAdvertiseURL(ctx context.Context, u string) error {
	u = strings.TrimRight(u, "/")
	if err := r.client.Instance.UpdateOneID(r.id).SetAdvertiseURL(u).Exec(ctx); err != nil {
		return apperr.Storage(err, "record this instance's advertise URL")
	}
	r.mu.Lock()
	r.url = u
	r.mu.Unlock()
	return r.refreshHosts(ctx)
}

// Run renews the heartbeat every HeartbeatEvery until ctx ends. A failed
// renewal is logged and retried at the next tick: the others take this
// instance for down only after DownAfter.
func (r *Registry) Run(ctx context.Context) {
	t := time.NewTicker(HeartbeatEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := r.beat(ctx); err != nil && ctx.Err() == nil {
			r.log.WarnContext(ctx, "instance: heartbeat not renewed", "instance", r.id, "err", err)
		}
	}
}

func (r *Registry) beat(ctx context.Context) error {
	n, err := r.client.Instance.Update().Where(entinstance.ID(r.id)).SetHeartbeatAt(r.now()).Save(ctx)
	if err != nil {
		return fmt.Errorf("renew the heartbeat: %w", err)
	}
	if n == 0 { // the entry was removed: make it again
		now := r.now()
		r.mu.Lock()
		u := r.url
		r.mu.Unlock()
		if err := r.client.Instance.Create().SetID(r.id).SetAdvertiseURL(u).SetStartedAt(now).SetHeartbeatAt(now).
			OnConflictColumns(entinstance.FieldID).UpdateHeartbeatAt().Exec(ctx); err != nil {
			return fmt.Errorf("register again: %w", err)
		}
	}
	return r.refreshHosts(ctx)
}

// refreshHosts reads the advertise hosts of every registered instance.
func (r *Registry) refreshHosts(ctx context.Context) error {
	urls, err := r.client.Instance.Query().Select(entinstance.FieldAdvertiseURL).Strings(ctx)
	if err != nil {
		return fmt.Errorf("read the instances: %w", err)
	}
	hosts := map[string]bool{}
	for _, u := range urls {
		if p, err := url.Parse(u); err == nil && p.Hostname() != "" {
			hosts[strings.ToLower(p.Hostname())] = true
		}
	}
	r.mu.Lock()
	r.hosts = hosts
	r.mu.Unlock()
	return nil
}

// AllowsHost reports whether host (lower case, no port) is the host of a
// registered instance's advertise URL: forwarded requests carry it.
func (r *Registry) AllowsHost(host string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.hosts[host]
}

// Get reads the instance id; apperr.SessionUnavailable when it is not
// registered.
func (r *Registry) Get(ctx context.Context, id string) (Info, error) {
	e, err := r.client.Instance.Get(ctx, id)
	if ent.IsNotFound(err) {
		return Info{}, apperr.New(apperr.SessionUnavailable, "the session's instance %q is not registered", id)
	}
	if err != nil {
		return Info{}, apperr.Storage(err, "read the instance")
	}
	return r.info(e), nil
}

func (r *Registry) info(e *ent.Instance) Info {
	return Info{ID: e.ID, AdvertiseURL: e.AdvertiseURL, StartedAt: e.StartedAt, HeartbeatAt: e.HeartbeatAt,
		Alive: r.now().Sub(e.HeartbeatAt) <= DownAfter}
}

// List reads every registered instance with the sessions it owns, by id.
func List(ctx context.Context, client *ent.Client, now time.Time) ([]Info, error) {
	all, err := client.Instance.Query().Order(ent.Asc(entinstance.FieldID)).All(ctx)
	if err != nil {
		return nil, apperr.Storage(err, "read the instances")
	}
	var counts []struct {
		InstanceID string `json:"instance_id"`
		Count      int    `json:"count"`
	}
	if err := client.AgentSession.Query().GroupBy(agentsession.FieldInstanceID).
		Aggregate(ent.Count()).Scan(ctx, &counts); err != nil {
		return nil, apperr.Storage(err, "count the sessions of each instance")
	}
	owned := map[string]int{}
	for _, c := range counts {
		owned[c.InstanceID] = c.Count
	}
	out := make([]Info, 0, len(all))
	for _, e := range all {
		out = append(out, Info{ID: e.ID, AdvertiseURL: e.AdvertiseURL, StartedAt: e.StartedAt, HeartbeatAt: e.HeartbeatAt,
			Alive: now.Sub(e.HeartbeatAt) <= DownAfter, Sessions: owned[e.ID]})
	}
	return out, nil
}
