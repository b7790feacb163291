package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"tuttid/codex/codextest"
)

// TestInstancesThroughputSoak is issue 25's throughput soak: the same
// load (workers, each a session with its turns then its forks, while
// subscribers follow the workspace) against one instance and against two
// on one PostgreSQL database, in the same run; it reports turns/s and
// forks/s of each, checks that every subscriber of every instance saw
// every event in seq order without a gap or a duplicate and that no
// request failed, and reports the database's size after the one-instance
// load on PostgreSQL and on SQLite. TUTTID_SOAK=long runs a larger load.
func TestInstancesThroughputSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("a soak")
	}
	load := throughputLoad{workers: 6, turns: 6, forks: 3, subscribers: 8}
	if os.Getenv("TUTTID_SOAK") == "long" {
		load = throughputLoad{workers: 16, turns: 12, forks: 6, subscribers: 24}
	}
	c := newCluster(t)
	a := c.start("a")
	pgBase := pgDatabaseSize(t, c.db)
	one := load.run(t, c, "one instance", []*proc{a})
	pgAfter := pgDatabaseSize(t, c.db)
	b := c.start("b")
	two := load.run(t, c, "two instances", []*proc{a, b})

	// The same work on SQLite, one instance.
	dbPath := filepath.Join(t.TempDir(), "soak.db")
	home := filepath.Join(lingeringTempDir(t), "codex")
	if err := codextest.WriteCodexHome(home, c.model.URL()); err != nil {
		t.Fatal(err)
	}
	s := startTuttid(t, dbPath, c.bin, home)
	liteBase := sqliteSize(t, dbPath)
	lite := load.run(t, c, "one instance on SQLite", []*proc{s})
	liteAfter := sqliteSize(t, dbPath)
	wal := int64(0)
	if fi, err := os.Stat(dbPath + "-wal"); err == nil {
		wal = fi.Size()
	}

	t.Logf("load: %d sessions x %d turns, %d forks each, %d subscribers", load.workers, load.turns, load.forks, load.subscribers)
	for _, r := range []throughput{one, two, lite} {
		t.Logf("%-24s turns %3d in %6.2fs = %5.2f turns/s; forks %3d in %6.2fs = %5.2f forks/s; events %d to each of %d subscribers",
			r.name, r.turns, r.turnTime.Seconds(), float64(r.turns)/r.turnTime.Seconds(),
			r.forks, r.forkTime.Seconds(), float64(r.forks)/r.forkTime.Seconds(), r.events, r.subscribers)
	}
	t.Logf("two/one instance: turns/s x%.2f, forks/s x%.2f",
		(float64(two.turns)/two.turnTime.Seconds())/(float64(one.turns)/one.turnTime.Seconds()),
		(float64(two.forks)/two.forkTime.Seconds())/(float64(one.forks)/one.forkTime.Seconds()))
	t.Logf("database size after the one-instance load: PostgreSQL %s (pg_database_size; %s before, +%s), SQLite %s (file + WAL, of which WAL %s; %s before, +%s)",
		sizeMiB(pgAfter), sizeMiB(pgBase), sizeMiB(pgAfter-pgBase), sizeMiB(liteAfter), sizeMiB(wal), sizeMiB(liteBase), sizeMiB(liteAfter-liteBase))
}

func sizeMiB(n int64) string { return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20)) }

func pgDatabaseSize(t *testing.T, url string) int64 {
	t.Helper()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int64
	if err := db.QueryRow(`SELECT pg_database_size(current_database())`).Scan(&n); err != nil {
		t.Fatalf("pg_database_size: %v", err)
	}
	return n
}

// sqliteSize is the database file and its WAL (and shared memory) file.
func sqliteSize(t *testing.T, path string) int64 {
	t.Helper()
	var n int64
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if fi, err := os.Stat(path + suffix); err == nil {
			n += fi.Size()
		}
	}
	return n
}

type throughputLoad struct{ workers, turns, forks, subscribers int }

type throughput struct {
	name                string
	turns, forks        int
	turnTime, forkTime  time.Duration
	events, subscribers int
}

// run makes a workspace on the first instance, subscribes to it on every
// instance in turn, then runs the workers: worker i starts its session on
// instance i (mod), sends its turns and forks through the instances in
// turn (on two instances half of the commands are forwarded to the
// owner), each turn waited for. Turns and forks are timed as two phases.
func (l throughputLoad) run(t *testing.T, c *cluster, name string, on []*proc) throughput {
	t.Helper()
	ws := c.workspace(on[0])
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var subs []*activitySub
	for i := range l.subscribers {
		s, err := subscribeActivity(ctx, on[i%len(on)].url, ws)
		if err != nil {
			t.Fatalf("%s: subscriber %d: %v", name, i, err)
		}
		subs = append(subs, s)
	}
	res := throughput{name: name, turns: l.workers * l.turns, forks: l.workers * l.forks, subscribers: len(subs)}
	sessions := make([]string, l.workers)
	errs := make(chan error, l.workers)
	phase := func(work func(i int) error) time.Duration {
		start := time.Now()
		var wg sync.WaitGroup
		for i := range l.workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := work(i); err != nil {
					errs <- fmt.Errorf("worker %d: %w", i, err)
				}
			}()
		}
		wg.Wait()
		return time.Since(start)
	}
	res.turnTime = phase(func(i int) error {
		owner := on[i%len(on)]
		var s struct{ StartSession struct{ ID string } }
		if err := call(owner, `mutation($in: StartSessionInput!) { startSession(input: $in) { id } }`,
			map[string]any{"in": map[string]any{"workspaceId": ws, "title": fmt.Sprintf("soak %d", i)}}, &s); err != nil {
			return err
		}
		sessions[i] = s.StartSession.ID
		for j := range l.turns {
			via := on[(i+j)%len(on)]
			if err := call(via, `mutation($in: SendMessageInput!) { sendMessage(input: $in) { id } }`,
				map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": sessions[i], "text": fmt.Sprintf("turn %d of %d", j, i)}}, nil); err != nil {
				return err
			}
			if err := awaitTurns(via, ws, sessions[i], j+1); err != nil {
				return err
			}
		}
		return nil
	})
	res.forkTime = phase(func(i int) error {
		if sessions[i] == "" {
			return nil
		}
		owner := on[i%len(on)]
		for k := range l.forks {
			via := on[(i+k+1)%len(on)]
			var out forkPayload
			if err := call(via, `mutation($in: ForkSessionInput!) { forkSession(input: $in) { session { id instanceId } } }`,
				map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": sessions[i],
					"requestId": fmt.Sprintf("%s-%d-%d", strings.ReplaceAll(name, " ", "-"), i, k)}}, &out); err != nil {
				return err
			}
			child := out.ForkSession.Session.ID
			if got := owner.owner(ws, child); got != owner.owner(ws, sessions[i]) {
				return fmt.Errorf("fork %s owned by %q, not by its parent's owner", child, got)
			}
		}
		return nil
	})
	close(errs)
	for err := range errs {
		t.Errorf("%s: %v", name, err)
	}
	// Every subscriber reaches the same last seq, having seen every seq
	// from its SUBSCRIBED on once, in order.
	last, err := settle(subs, 30*time.Second)
	if err != nil {
		t.Errorf("%s: %v", name, err)
	}
	for i, s := range subs {
		if err := s.check(last); err != nil {
			t.Errorf("%s: subscriber %d (on %s): %v", name, i, on[i%len(on)].url, err)
		}
	}
	if len(subs) > 0 {
		res.events = len(subs[0].seqsCopy())
	}
	return res
}

// call sends an operation and turns a GraphQL error into an error (no
// request of the soak may fail).
func call(p *proc, query string, vars map[string]any, out any) error {
	errs, err := p.gql(query, vars, out)
	if err != nil {
		return err
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s: %s (%s)", strings.Fields(query)[1], errs[0].Message, errs[0].code())
	}
	return nil
}

// awaitTurns waits until the session is READY with n turns, none running.
func awaitTurns(p *proc, ws, id string, n int) error {
	deadline := time.Now().Add(90 * time.Second)
	for {
		var out struct {
			Session struct {
				Status string
				Turns  []struct{ Status string }
			}
		}
		if err := call(p, `query($ws: ID!, $id: ID!) { session(workspaceId: $ws, id: $id) { status turns { status } } }`,
			map[string]any{"ws": ws, "id": id}, &out); err != nil {
			return err
		}
		done := out.Session.Status == "READY" && len(out.Session.Turns) == n
		for _, tr := range out.Session.Turns {
			if tr.Status == "IN_PROGRESS" {
				done = false
			} else if tr.Status != "COMPLETED" {
				return fmt.Errorf("session %s: a turn ended %s", id, tr.Status)
			}
		}
		if done {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("session %s: turn %d not done: %+v", id, n, out.Session)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// activitySub is one workspace subscription over graphql-transport-ws,
// recording the seq of each event after SUBSCRIBED.
type activitySub struct {
	mu         sync.Mutex
	subscribed int64
	seqs       []int64
	err        error
}

func subscribeActivity(ctx context.Context, base, ws string) (*activitySub, error) {
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := dialGraphQL(dctx, base, "graphql-transport-ws", nil)
	if err != nil {
		return nil, err
	}
	if err := c.subscribe(ctx, "subscribe", "1", `subscription($ws: ID!) { activity(workspaceId: $ws) { kind seq } }`,
		map[string]any{"ws": ws}); err != nil {
		c.close()
		return nil, err
	}
	s := &activitySub{subscribed: -1}
	ready := make(chan error, 1)
	go func() {
		defer c.close()
		for {
			f, err := c.read(ctx)
			if err != nil {
				if ctx.Err() == nil {
					s.fail(err)
				}
				return
			}
			switch f.Type {
			case "ping":
				_ = c.send(ctx, gqlFrame{Type: "pong"})
			case "next":
				var p struct {
					Data struct {
						Activity struct {
							Kind string
							Seq  int64
						}
					}
					Errors []struct{ Message string }
				}
				if err := json.Unmarshal(f.Payload, &p); err != nil || len(p.Errors) > 0 {
					s.fail(fmt.Errorf("event %s: %v", f.Payload, err))
					return
				}
				e := p.Data.Activity
				s.mu.Lock()
				switch {
				case e.Kind == "SUBSCRIBED":
					s.subscribed = e.Seq
					select {
					case ready <- nil:
					default:
					}
				case e.Kind == "RESYNC_REQUIRED":
					s.err = fmt.Errorf("RESYNC_REQUIRED after seq %d: events lost", e.Seq)
				default:
					s.seqs = append(s.seqs, e.Seq)
				}
				s.mu.Unlock()
			case "error", "complete":
				s.fail(fmt.Errorf("subscription ended: %s %s", f.Type, f.Payload))
				return
			}
		}
	}()
	select {
	case <-ready:
		return s, nil
	case <-time.After(10 * time.Second):
		return nil, errors.New("no SUBSCRIBED within 10s")
	}
}

func (s *activitySub) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
	}
}

func (s *activitySub) seqsCopy() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int64(nil), s.seqs...)
}

func (s *activitySub) lastSeq() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.seqs) == 0 {
		return s.subscribed
	}
	return s.seqs[len(s.seqs)-1]
}

// check: the events after SUBSCRIBED are exactly seq subscribed+1 .. last,
// each once, in order.
func (s *activitySub) check(last int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	want := s.subscribed + 1
	for _, q := range s.seqs {
		if q != want {
			return fmt.Errorf("got seq %d where %d was due (subscribed at %d): a gap, a duplicate or out of order", q, want, s.subscribed)
		}
		want++
	}
	if want-1 != last {
		return fmt.Errorf("last seq %d, want %d", want-1, last)
	}
	return nil
}

// settle waits until every subscriber has the same last seq for a second,
// and returns it.
func settle(subs []*activitySub, within time.Duration) (int64, error) {
	deadline := time.Now().Add(within)
	var last int64 = -1
	stableSince := time.Now()
	for {
		var hi, lo int64 = -1, -1
		for _, s := range subs {
			q := s.lastSeq()
			if hi < 0 || q > hi {
				hi = q
			}
			if lo < 0 || q < lo {
				lo = q
			}
		}
		if hi != last || lo != hi {
			last, stableSince = hi, time.Now()
		} else if time.Since(stableSince) >= time.Second {
			return last, nil
		}
		if time.Now().After(deadline) {
			return hi, fmt.Errorf("subscribers did not reach the same last seq within %s (lowest %d, highest %d)", within, lo, hi)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
