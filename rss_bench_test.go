package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"tuttid/codex/codextest"
	"tuttid/store"
)

// rssMessagesEnv chooses the large database's size for BenchmarkServerRSS
// (default rssLargeMessages, the target).
const (
	rssMessagesEnv    = "TUTTID_BENCH_RSS_MESSAGES"
	rssLargeMessages  = 1_000_000
	rssSmallMessages  = 10_000
	rssPerSession     = 10_000 // every session of both databases has this many
	rssMessagesInTurn = 10
	rssWorkspace      = "w"
	rssTarget         = "s-0000" // the session the client workload reads
)

// BenchmarkServerRSS: the peak RSS (VmHWM) of a tuttid process holding
// 1,000,000 messages (100 sessions of 10,000) over one holding 10,000 (one
// such session), each started on its database and put through the same
// client workload over HTTP (workspaces, the session list, first, next and
// last message pages, the latest turns with their messages and the first
// page of turns, and the fork tree of one session).
// Sessions are the same size in both, so what grows is only the data the
// server holds, not what it is asked for; ratio is the large server's
// peak over the small one's (target ≤ 1.2). start-ratio compares the time
// from exec to listening.
func BenchmarkServerRSS(b *testing.B) {
	large := rssLargeMessages
	if v := os.Getenv(rssMessagesEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < rssPerSession || n%rssPerSession != 0 {
			b.Fatalf("%s=%q: want a multiple of %d", rssMessagesEnv, v, rssPerSession)
		}
		large = n
	}
	bin := codextest.Binary(b)
	model := codextest.StartModelServer(b)
	home := b.TempDir()
	if err := codextest.WriteCodexHome(home, model.URL()); err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	dbs := map[int]string{}
	for _, n := range []int{rssSmallMessages, large} {
		start := time.Now()
		dbs[n] = filepath.Join(dir, fmt.Sprintf("tuttid-%d.db", n))
		seedMessages(b, dbs[n], n/rssPerSession)
		fi, err := os.Stat(dbs[n])
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("built %d messages in %s: %d MiB", n, time.Since(start).Round(time.Millisecond), fi.Size()>>20)
	}

	b.Run(fmt.Sprintf("messages=%d/%d", large, rssSmallMessages), func(b *testing.B) {
		var peak, started [2]time.Duration // peak in KiB, kept in a Duration for the sums
		for range b.N {
			for i, n := range []int{rssSmallMessages, large} {
				kib, took := rssRun(b, dbs[n], bin, home)
				peak[i] += time.Duration(kib)
				started[i] += took
			}
		}
		b.ReportMetric(float64(peak[0])/1024/float64(b.N), "small-MiB")
		b.ReportMetric(float64(peak[1])/1024/float64(b.N), "large-MiB")
		b.ReportMetric(float64(peak[1])/float64(peak[0]), "ratio")
		b.ReportMetric(float64(started[0].Milliseconds())/float64(b.N), "small-start-ms")
		b.ReportMetric(float64(started[1].Milliseconds())/float64(b.N), "large-start-ms")
		b.ReportMetric(float64(started[1])/float64(started[0]), "start-ratio")
	})
}

// rssRun starts tuttid on db, runs the client workload, and returns its
// VmHWM in KiB and how long it took to listen.
func rssRun(b *testing.B, db, bin, home string) (int64, time.Duration) {
	start := time.Now()
	p := startTuttid(b, db, bin, home)
	took := time.Since(start)
	defer p.kill()
	for range 5 {
		rssWorkload(b, p)
	}
	return vmHWM(b, p.cmd.Process.Pid), took
}

// rssWorkload is what a client (the GUI) reads of a big server.
func rssWorkload(b *testing.B, p *proc) {
	var ws struct{ Workspaces []struct{ ID string } }
	p.must(`{ workspaces { id name rootPath } }`, nil, &ws)
	if len(ws.Workspaces) != 1 {
		b.Fatalf("workspaces: %+v", ws)
	}
	var list struct {
		Workspace struct {
			Sessions struct {
				Edges []struct{ Node struct{ ID string } }
			}
		}
	}
	p.must(`query($ws: ID!) { workspace(id: $ws) { sessions(first: 50) { edges { node {
		id displayTitle status updatedAt parent { id } children { id } } } } } }`,
		map[string]any{"ws": rssWorkspace}, &list)
	if len(list.Workspace.Sessions.Edges) == 0 {
		b.Fatal("no sessions listed")
	}
	type page struct {
		Session struct {
			Messages struct {
				Edges    []struct{ Node struct{ ID, Text string } }
				PageInfo struct{ EndCursor string }
			}
		}
	}
	const pageQuery = `query($ws: ID!, $id: ID!, $first: Int, $after: Cursor, $last: Int) {
		session(workspaceId: $ws, id: $id) { messages(first: $first, after: $after, last: $last) {
			edges { node { id role text status turnId } } pageInfo { endCursor } } } }`
	vars := func(kv ...any) map[string]any {
		m := map[string]any{"ws": rssWorkspace, "id": rssTarget}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	var first, next, last page
	p.must(pageQuery, vars("first", 50), &first)
	p.must(pageQuery, vars("first", 50, "after", first.Session.Messages.PageInfo.EndCursor), &next)
	p.must(pageQuery, vars("last", 50), &last)
	for _, pg := range []page{first, next, last} {
		if len(pg.Session.Messages.Edges) != 50 {
			b.Fatalf("a message page has %d messages, want 50", len(pg.Session.Messages.Edges))
		}
	}
	// The conversation as the GUI reads it: the latest 20 turns with their
	// messages, then a page of the earliest.
	type turnPage struct {
		Session struct {
			TurnConnection struct {
				Edges []struct {
					Node struct {
						ID       string
						Messages []struct{ ID string }
					}
				}
			}
		}
	}
	var latest, earliest turnPage
	p.must(`query($ws: ID!, $id: ID!) { session(workspaceId: $ws, id: $id) { turnConnection(last: 20) {
		edges { node { id status startedAt messages { id role text status } } } pageInfo { startCursor hasPreviousPage } } } }`, vars(), &latest)
	p.must(`query($ws: ID!, $id: ID!) { session(workspaceId: $ws, id: $id) { turnConnection(first: 50) {
		edges { node { id status startedAt } } pageInfo { endCursor hasNextPage } } } }`, vars(), &earliest)
	if n := len(latest.Session.TurnConnection.Edges); n != 20 || len(latest.Session.TurnConnection.Edges[n-1].Node.Messages) != rssMessagesInTurn {
		b.Fatalf("latest turns: %d, want 20 of %d messages", n, rssMessagesInTurn)
	}
	if n := len(earliest.Session.TurnConnection.Edges); n != 50 {
		b.Fatalf("earliest turns: %d, want 50", n)
	}
	var tree struct{ ForkTree []struct{ Depth int } }
	p.must(`query($ws: ID!, $id: ID!) { forkTree(workspaceId: $ws, agentSessionId: $id) { depth parentId session { id displayTitle } } }`, vars(), &tree)
	if len(tree.ForkTree) == 0 {
		b.Fatal("empty fork tree")
	}
}

// vmHWM reads a process's peak resident set size (KiB).
func vmHWM(b *testing.B, pid int) int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.SplitSeq(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kib, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				b.Fatalf("VmHWM %q: %v", v, err)
			}
			return kib
		}
	}
	b.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}

// seedMessages builds a database of sessions sessions of rssPerSession
// messages each (turns of rssMessagesInTurn: a user message, then the
// agent's tool calls and replies, a few hundred bytes of text each, stored
// as ingestion stores them: the text and the whole item), the later
// sessions forks of the first. The schema is the store's (store.Open
// migrates it); the rows go in through prepared statements in one
// transaction, without a journal.
func seedMessages(b *testing.B, path string, sessions int) {
	ctx := context.Background()
	st, err := store.Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	st.Close()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(OFF)&_pragma=synchronous(OFF)&_time_format=sqlite")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	tx, err := db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	exec := func(q string, args ...any) {
		if _, err := tx.Exec(q, args...); err != nil {
			b.Fatalf("%s: %v", q, err)
		}
	}
	prepare := func(q string) *sql.Stmt {
		s, err := tx.Prepare(q)
		if err != nil {
			b.Fatalf("%s: %v", q, err)
		}
		return s
	}
	exec(`INSERT INTO workspaces (workspace_id, name, root_path, created_at, updated_at) VALUES (?, ?, ?, ?, ?)`,
		rssWorkspace, "big", "/tmp/big", now, now)
	insSession := prepare(`INSERT INTO workspace_agent_sessions (agent_session_id, workspace_id, provider,
		provider_session_id, title, settings_json, last_message_version, created_at, updated_at)
		VALUES (?, ?, 'codex', ?, ?, '{}', ?, ?, ?)`)
	insFork := prepare(`INSERT INTO workspace_agent_session_forks (workspace_id, child_agent_session_id,
		parent_agent_session_id, provider, fork_request_id, forked_at_unix_ms) VALUES (?, ?, ?, 'codex', ?, ?)`)
	insTurn := prepare(`INSERT INTO workspace_agent_turns (agent_session_id, turn_id, status, started_at, completed_at)
		VALUES (?, ?, 'COMPLETED', ?, ?)`)
	insMsg := prepare(`INSERT INTO workspace_agent_messages (message_id, agent_session_id, workspace_id, turn_id,
		role, kind, text, content_json, status, version, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'completed', ?, ?, ?)`)
	for s := range sessions {
		id := fmt.Sprintf("s-%04d", s)
		if _, err := insSession.Exec(id, rssWorkspace, "thread-"+id, "session "+id, rssPerSession, now, now); err != nil {
			b.Fatal(err)
		}
		if s > 0 {
			if _, err := insFork.Exec(rssWorkspace, id, rssTarget, "req-"+id, now.UnixMilli()); err != nil {
				b.Fatal(err)
			}
		}
		for v := 1; v <= rssPerSession; v++ {
			turn := fmt.Sprintf("turn-%05d", (v-1)/rssMessagesInTurn)
			if (v-1)%rssMessagesInTurn == 0 {
				if _, err := insTurn.Exec(id, turn, now, now); err != nil {
					b.Fatal(err)
				}
			}
			item, role, kind, text := seedItem(s, v)
			if _, err := insMsg.Exec(item, id, rssWorkspace, turn, role, kind, text, seedContent(item, kind, text), v, now, now); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
}

// seedWords make the texts: varied enough not to compress to nothing.
var seedWords = strings.Fields(`the build failed because the handler reads the whole request body before
checking its size so a client can make the server allocate without bound; limit the reader first, then
decode, and return a clear error with a stable code when the body is too large. tests cover an empty body,
one byte over the bound and a body exactly at it. go vet reports nothing and gofmt is clean on every file`)

// seedItem is message v of session s: its item id, role, kind and a text
// of 200 to 500 bytes.
func seedItem(s, v int) (id, role, kind, text string) {
	id = fmt.Sprintf("item-%d-%d", s, v)
	switch (v - 1) % rssMessagesInTurn {
	case 0:
		role, kind = "user", "userMessage"
	case 1, 3, 5, 7:
		role, kind = "tool", "commandExecution"
	default:
		role, kind = "assistant", "agentMessage"
	}
	var sb strings.Builder
	for i := (s*31 + v*7) % len(seedWords); sb.Len() < 200+(v*37)%300; i++ {
		sb.WriteString(seedWords[i%len(seedWords)])
		sb.WriteByte(' ')
	}
	return id, role, kind, sb.String()
}

// seedContent is the item as Codex sends it (and ingestion stores it whole).
func seedContent(id, kind, text string) string {
	var item any
	switch kind {
	case "userMessage":
		item = map[string]any{"type": kind, "id": id, "content": []any{map[string]any{"type": "text", "text": text}}}
	case "commandExecution":
		item = map[string]any{"type": kind, "id": id, "command": "go test ./...", "cwd": "/tmp/big", "status": "completed", "aggregatedOutput": text, "exitCode": 0}
	default:
		item = map[string]any{"type": kind, "id": id, "text": text}
	}
	raw, _ := json.Marshal(item)
	return string(raw)
}
