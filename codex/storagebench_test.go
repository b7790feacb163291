package codex

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tuttid/codex/codextest"
	"tuttid/ent/agentsession"
	"tuttid/fork"
	"tuttid/session"
)

// storageWords make replies of a realistic size that do not compress to
// nothing.
var storageWords = strings.Fields(`the build failed because the handler reads the whole request body before
checking its size so a client can make the server allocate without bound; limit the reader first, then
decode, and return a clear error with a stable code when the body is too large. tests cover an empty body,
one byte over the bound and a body exactly at it. go vet reports nothing and gofmt is clean on every file`)

// storageReply is an assistant reply of about size bytes.
func storageReply(seed, size int) string {
	var sb strings.Builder
	for i := seed; sb.Len() < size; i++ {
		sb.WriteString(storageWords[i%len(storageWords)])
		sb.WriteByte(' ')
	}
	return sb.String()
}

// BenchmarkForkStorage forks a parent of 40 completed turns (a short
// request, a reply of about 400 bytes) on the real app-server and measures
// the disk each fork adds: tuttid's database file (checkpointed), beside
// the rollout file Codex writes for the child thread under
// CODEX_HOME/sessions, both per fork and per message of the child. ratio
// is tuttid's bytes over Codex's. Codex 0.169 does not copy the history:
// the child's rollout starts with a session_meta naming the parent
// (forked_from_id, forked_from_ordinal_exclusive), so its size does not
// grow with the parent's; parent-rollout-B/msg is what Codex's format
// spends per message where it does write one. text-B/msg and
// content-B/msg are the child's rows' text column and raw item
// (content_json), which holds the text again.
func BenchmarkForkStorage(b *testing.B) {
	const turns = 40
	ctx := context.Background()
	model := codextest.StartModelServer(b)
	seed := 0
	model.SetReply(func(r codextest.Request) codextest.Reply {
		seed++
		return codextest.Reply{Text: storageReply(seed*7, 400)}
	})
	g := startRealRig(b, model, 0)
	home, dbPath, st, sessions, forks := g.home, g.dbPath, g.st, g.sessions, g.forks
	// A fork at a quarter of the history first: Codex's child rollout is
	// the same size whatever the history (codex-growth near 1), tuttid's
	// copy grows with it.
	parent := benchParent(b, ctx, sessions, turns/4)
	early, err := forks.Fork(ctx, fork.Input{WorkspaceID: "w", ParentSessionID: parent.ID, RequestID: "storage-early"})
	if err != nil {
		b.Fatal(err)
	}
	earlyRollout := rolloutSize(b, home, early.Session.ProviderSessionID)
	sendTurns(b, ctx, sessions, parent.ID, turns/4, turns)

	dbSize := func() int64 {
		if _, err := st.DB.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
			b.Fatal(err)
		}
		fi, err := os.Stat(dbPath)
		if err != nil {
			b.Fatal(err)
		}
		return fi.Size()
	}
	var tuttidBytes, codexBytes, textBytes, contentBytes, messages int64
	b.ResetTimer()
	for i := range b.N {
		before := dbSize()
		res, err := forks.Fork(ctx, fork.Input{WorkspaceID: "w", ParentSessionID: parent.ID, RequestID: fmt.Sprintf("storage-%d", i)})
		if err != nil {
			b.Fatal(err)
		}
		tuttidBytes += dbSize() - before
		n := res.Session.LastMessageVersion
		if n < turns {
			b.Fatalf("child has %d messages, want at least %d", n, turns)
		}
		messages += n
		rollout := rolloutSize(b, home, res.Session.ProviderSessionID)
		codexBytes += rollout
		var sums struct{ text, content int64 }
		if err := st.DB.QueryRowContext(ctx, `SELECT COALESCE(SUM(LENGTH(CAST(text AS BLOB))), 0),
			COALESCE(SUM(LENGTH(CAST(content_json AS BLOB))), 0) FROM workspace_agent_messages WHERE agent_session_id = ?`,
			res.Session.ID).Scan(&sums.text, &sums.content); err != nil {
			b.Fatal(err)
		}
		textBytes += sums.text
		contentBytes += sums.content
	}
	b.StopTimer()
	// Where the bytes go: the messages table and its indexes (dbstat),
	// per message stored.
	var all, table, indexes int64
	if err := st.DB.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM workspace_agent_messages),
		(SELECT SUM(pgsize) FROM dbstat WHERE name = 'workspace_agent_messages'),
		(SELECT SUM(pgsize) FROM dbstat WHERE name IN (SELECT name FROM sqlite_master
			WHERE type = 'index' AND tbl_name = 'workspace_agent_messages'))`).Scan(&all, &table, &indexes); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(table)/float64(all), "table-B/msg")
	b.ReportMetric(float64(indexes)/float64(all), "indexes-B/msg")
	b.ReportMetric(float64(messages)/float64(b.N), "msgs/fork")
	b.ReportMetric(float64(tuttidBytes)/float64(messages), "tuttid-B/msg")
	b.ReportMetric(float64(codexBytes)/float64(messages), "codex-B/msg")
	b.ReportMetric(float64(tuttidBytes)/1024/float64(b.N), "tuttid-KiB/fork")
	b.ReportMetric(float64(codexBytes)/1024/float64(b.N), "codex-KiB/fork")
	b.ReportMetric(float64(tuttidBytes)/float64(codexBytes), "ratio")
	b.ReportMetric(float64(codexBytes)/float64(b.N)/float64(earlyRollout), "codex-growth")
	b.ReportMetric(float64(textBytes)/float64(messages), "text-B/msg")
	b.ReportMetric(float64(contentBytes)/float64(messages), "content-B/msg")
	b.ReportMetric(float64(rolloutSize(b, home, parent.ProviderSessionID))/float64(messages/int64(b.N)), "parent-rollout-B/msg")
}

// sendTurns runs turns from..to-1 of a session to completion.
func sendTurns(b testing.TB, ctx context.Context, sessions *session.Service, id string, from, to int) {
	for i := from; i < to; i++ {
		if _, err := sessions.Send(ctx, "w", id, fmt.Sprintf("turn %d", i)); err != nil {
			b.Fatal(err)
		}
		// The session is READY again only once the turn is stored
		// completed (session.completeTurn).
		deadline := time.Now().Add(60 * time.Second)
		for {
			cur, err := sessions.Session(ctx, "w", id)
			if err != nil {
				b.Fatal(err)
			}
			if cur.Status == agentsession.StatusREADY {
				break
			}
			if cur.Status != agentsession.StatusWORKING || time.Now().After(deadline) {
				b.Fatalf("turn %d left the session %s", i, cur.Status)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// rolloutSize is the size of a thread's rollout file under home/sessions.
func rolloutSize(b *testing.B, home, threadID string) int64 {
	var size int64 = -1
	err := filepath.WalkDir(filepath.Join(home, "sessions"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.Contains(d.Name(), threadID) {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			size = fi.Size()
		}
		return nil
	})
	if err != nil || size < 0 {
		b.Fatalf("no rollout file for thread %s under %s: %v", threadID, home, err)
	}
	return size
}
