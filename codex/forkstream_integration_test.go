package codex

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"tuttid/codex/codextest"
	"tuttid/fork"
)

// TestForkStreamedHistoryEqualsPaged forks one parent on the real Codex
// twice: its history read from thread/fork's own reply as it streams in,
// and read after an excludeTurns fork in thread/turns/list pages (the path
// small histories still take, and every fork took before). The two
// children's stored turns and messages are the same, byte for byte
// (text and the items' JSON), and both came from the provider.
func TestForkStreamedHistoryEqualsPaged(t *testing.T) {
	ctx := context.Background()
	model := codextest.StartModelServer(t)
	replies := []string{
		"plain reply",
		"quotes \" backslash \\ tab\t newline\n slash / unicode é 😀 control \x01 end",
		strings.Repeat("a long reply line with \"quotes\" and a newline\n", 25_000), // ~1.2 MB
		"after the long one",
	}
	model.SetReply(func(req codextest.Request) codextest.Reply {
		var n int
		fmt.Sscanf(req.LastUserText(), "turn %d", &n)
		return codextest.Reply{Text: replies[n%len(replies)], ChunkBytes: 64 << 10}
	})
	g := startRealRig(t, model, 2*time.Minute)
	parent := benchParent(t, ctx, g.sessions, len(replies))

	children := map[string]string{}
	for _, path := range []struct {
		name  string
		above int64
	}{{"paged", 1 << 62}, {"streamed", 1}} {
		g.rt.forkStreamAbove = path.above
		res, err := g.forks.Fork(ctx, fork.Input{WorkspaceID: "w", ParentSessionID: parent.ID, RequestID: "eq-" + path.name})
		if err != nil {
			t.Fatalf("%s fork: %v", path.name, err)
		}
		if src := res.Session.RuntimeContext["forkMessageSource"]; src != fork.SourceProviderTurns {
			t.Fatalf("%s fork: history from %v", path.name, src)
		}
		children[path.name] = res.Session.ID
		if streamed := g.rt.streamedForks.Load(); (streamed == 1) != (path.above == 1) {
			t.Fatalf("%s fork: %d forks streamed so far", path.name, streamed)
		}
	}
	type row struct{ TurnID, MessageID, Role, Kind, Text, Content, Status string }
	history := func(session string) (turns []string, msgs []row) {
		rows, err := g.st.DB.QueryContext(ctx, `SELECT turn_id, status, error, error_code FROM workspace_agent_turns WHERE agent_session_id = ? ORDER BY started_at, id`, session)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id, status, e, code string
			if err := rows.Scan(&id, &status, &e, &code); err != nil {
				t.Fatal(err)
			}
			turns = append(turns, id+"|"+status+"|"+e+"|"+code)
		}
		rows.Close()
		rows, err = g.st.DB.QueryContext(ctx, `SELECT turn_id, message_id, role, kind, text, CAST(content_json AS BLOB), status FROM workspace_agent_messages WHERE agent_session_id = ? ORDER BY version`, session)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var r row
			var content []byte
			if err := rows.Scan(&r.TurnID, &r.MessageID, &r.Role, &r.Kind, &r.Text, &content, &r.Status); err != nil {
				t.Fatal(err)
			}
			r.Content = string(content)
			msgs = append(msgs, r)
		}
		return turns, msgs
	}
	pagedTurns, pagedMsgs := history(children["paged"])
	streamedTurns, streamedMsgs := history(children["streamed"])
	if len(pagedTurns) != len(replies) || len(pagedMsgs) < 2*len(replies) {
		t.Fatalf("paged child: %d turns, %d messages", len(pagedTurns), len(pagedMsgs))
	}
	if !reflect.DeepEqual(streamedTurns, pagedTurns) {
		t.Errorf("turns differ:\nstreamed %v\npaged    %v", streamedTurns, pagedTurns)
	}
	if len(streamedMsgs) != len(pagedMsgs) {
		t.Fatalf("streamed child has %d messages, paged %d", len(streamedMsgs), len(pagedMsgs))
	}
	for i := range pagedMsgs {
		if streamedMsgs[i] != pagedMsgs[i] {
			t.Errorf("message %d differs:\nstreamed %.300v\npaged    %.300v", i, streamedMsgs[i], pagedMsgs[i])
		}
	}
	var texts []string
	for _, m := range streamedMsgs {
		if m.Role == "assistant" {
			texts = append(texts, m.Text)
		}
	}
	if !reflect.DeepEqual(texts, replies) {
		t.Errorf("assistant texts are not the replies (%d of %d)", len(texts), len(replies))
	}
}
