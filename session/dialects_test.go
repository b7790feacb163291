package session

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"tuttid/agent"
	"tuttid/ent"
	"tuttid/ent/message"
	"tuttid/sqlbatch"
	"tuttid/store"
	"tuttid/store/pgtest"
	"tuttid/store/storetest"
)

// The raw SQL of this package on both backends, whatever TUTTID_TEST_DB
// says: each test runs once on a SQLite file and once on PostgreSQL.

// onBoth runs fn with an env on a SQLite file and one on PostgreSQL.
func onBoth(t *testing.T, fn func(t *testing.T, e *testEnv)) {
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			loc := filepath.Join(t.TempDir(), "tuttid.db")
			if name == "postgres" {
				loc = pgtest.URL(t)
			}
			st, err := store.Open(context.Background(), loc)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			fn(t, &testEnv{st: storetest.Wrap(t, st), svc: New(Config{Store: st})})
		})
	}
}

// TestInsertHistoryOnBothBackends: UPDATE ... RETURNING reserves the
// versions and the multi-row INSERTs (a full sqlbatch.MaxRows chunk and a
// short one) store every field, on both.
func TestInsertHistoryOnBothBackends(t *testing.T) {
	onBoth(t, func(t *testing.T, e *testEnv) {
		e.st.Workspace(storetest.Workspace{ID: "w"})
		a := e.st.Session(storetest.Session{ID: "s", Workspace: "w"})
		n := sqlbatch.MaxRows + 7
		msgs := make([]agent.RuntimeMessage, n)
		for i := range msgs {
			msgs[i] = agent.RuntimeMessage{ID: fmt.Sprintf("i%d", i), TurnID: "t1", Role: "assistant", Kind: "agentMessage",
				Text: fmt.Sprintf("text %d é", i), Content: json.RawMessage(fmt.Sprintf(`{"n":%d,"a":"é"}`, i)), Status: "completed"}
		}
		e.insert(t, a, msgs...)
		e.insert(t, a, msg("last", "user", "after"))
		ctx := context.Background()
		stored := e.st.Client.Message.Query().Where(message.AgentSessionID(a.ID)).Order(ent.Asc(message.FieldVersion)).AllX(ctx)
		if len(stored) != n+1 {
			t.Fatalf("%d messages stored, want %d", len(stored), n+1)
		}
		for i, m := range stored[:n] {
			if m.Version != int64(i+1) || m.MessageID != msgs[i].ID || m.Text != msgs[i].Text || string(m.Content) != string(msgs[i].Content) {
				t.Fatalf("message %d = v%d %s %q %s", i, m.Version, m.MessageID, m.Text, m.Content)
			}
		}
		if last := stored[n]; last.Version != int64(n+1) || last.MessageID != "last" {
			t.Errorf("last message = v%d %s", last.Version, last.MessageID)
		}
		if v := e.st.Client.AgentSession.GetX(ctx, a.ID).LastMessageVersion; v != int64(n+1) {
			t.Errorf("last_message_version = %d, want %d", v, n+1)
		}
	})
}

// argsDriver records the statements, with their arguments, that an ent
// client sends.
type argsDriver struct {
	dialect.Driver
	mu    sync.Mutex
	stmts []recorded
}

type recorded struct {
	query string
	args  []any
}

func (d *argsDriver) Query(ctx context.Context, query string, args, v any) error {
	d.record(query, args)
	return d.Driver.Query(ctx, query, args, v)
}

func (d *argsDriver) Exec(ctx context.Context, query string, args, v any) error {
	d.record(query, args)
	return d.Driver.Exec(ctx, query, args, v)
}

func (d *argsDriver) record(query string, args any) {
	a, _ := args.([]any)
	d.mu.Lock()
	d.stmts = append(d.stmts, recorded{query, a})
	d.mu.Unlock()
}

// TestPostgresReconcileUsesPartialIndexes is the counterpart of
// TestReconcileReadsOnlyWhatWasInProgress: on a database of 20,000
// settled messages and turns, PostgreSQL plans Reconcile's reads of what
// was left in progress on the partial indexes (the literal in the query
// matches the index's; PostgreSQL would match a parameter too, SQLite not).
func TestPostgresReconcileUsesPartialIndexes(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	e := &testEnv{st: storetest.Wrap(t, st), svc: New(Config{Store: st})}
	e.st.Workspace(storetest.Workspace{ID: "w"})
	e.st.Session(storetest.Session{ID: "s", Workspace: "w"})
	for _, q := range []string{
		`INSERT INTO workspace_agent_turns (turn_id, agent_session_id, status, error, started_at)
		 SELECT 't' || g, 's', CASE WHEN g % 5000 = 0 THEN 'IN_PROGRESS' ELSE 'COMPLETED' END, '', now() FROM generate_series(1, 20000) g`,
		`INSERT INTO workspace_agent_messages (message_id, agent_session_id, workspace_id, turn_id, role, kind, text, status, version, created_at, updated_at)
		 SELECT 'm' || g, 's', 'w', 't' || g, 'assistant', '', 'x', CASE WHEN g % 5000 = 0 THEN 'in_progress' ELSE 'completed' END, g, now(), now() FROM generate_series(1, 20000) g`,
		`ANALYZE`,
	} {
		if _, err := st.DB.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	d := &argsDriver{Driver: entsql.OpenDB(dialect.Postgres, st.DB)}
	svc := New(Config{Store: &store.Store{Client: ent.NewClient(ent.Driver(d)), DB: st.DB}})
	if err := svc.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"workspace_agent_messages": "message_in_progress", "workspace_agent_turns": "turn_in_progress"}
	for _, s := range d.stmts {
		for table, index := range want {
			// The statements of inProgressItems and runningTurns: their literal.
			if !strings.Contains(s.query, `"`+table+`"`) || !strings.Contains(strings.ToLower(s.query), "status\" = 'in_progress'") {
				continue
			}
			plan := explain(t, st.DB, s.query, s.args)
			if !strings.Contains(plan, index) {
				t.Errorf("%s\nis planned as %q, want it on the partial index %s", s.query, plan, index)
			}
			delete(want, table)
		}
	}
	for table := range want {
		t.Errorf("Reconcile sent no statement on %s's status", table)
	}
}

func explain(t *testing.T, db *sql.DB, query string, args []any) string {
	t.Helper()
	rows, err := db.Query("EXPLAIN "+query, args...)
	if err != nil {
		t.Fatalf("explain %s: %v", query, err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, strings.TrimSpace(line))
	}
	return strings.Join(plan, "; ")
}
