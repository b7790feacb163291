package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // "pgx", to inspect the database beside the store

	"tuttid/agent"
	"tuttid/ent"
	"tuttid/ent/message"
	"tuttid/store"
	"tuttid/store/pgtest"
	"tuttid/store/storetest"
)

// sqliteOnly skips a test of SQLite's own machinery (pragmas,
// sqlite_master) when the kit runs on PostgreSQL; counterpart names the
// test that checks PostgreSQL's.
func sqliteOnly(t *testing.T, counterpart string) {
	t.Helper()
	if storetest.OnPostgres() {
		t.Skipf("SQLite only; on PostgreSQL: %s", counterpart)
	}
}

// openPG opens url with store.Open; it closes when t ends.
func openPG(t *testing.T, url string, opts ...store.Option) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), url, opts...)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// rawPG is a plain connection to url, beside the store.
func rawPG(t *testing.T, url string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestPostgresOpen(t *testing.T) {
	for _, scheme := range []string{"postgres://", "postgresql://"} {
		t.Run(scheme, func(t *testing.T) {
			url := scheme + strings.TrimPrefix(pgtest.URL(t), "postgres://")
			ctx := context.Background()
			st := openPG(t, url)
			if d := st.Dialect(); d != store.Postgres {
				t.Fatalf("Dialect = %q, want %q", d, store.Postgres)
			}
			seed(t, st, map[string]string{"s": "w"})
			st.Close()
			// Opened again: migrating an up-to-date database changes nothing
			// and keeps the rows.
			again := openPG(t, url)
			if n := again.Client.AgentSession.Query().CountX(ctx); n != 1 {
				t.Fatalf("%d sessions after reopening, want 1", n)
			}
		})
	}
}

// TestPostgresOpenOptions: MustExist and ReadOnly refuse a database
// without tuttid's tables (nothing is created beside a running server);
// ReadOnly refuses writes.
func TestPostgresOpenOptions(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	for _, opt := range []store.Option{store.MustExist, store.ReadOnly} {
		if _, err := store.Open(ctx, url, opt); !errors.Is(err, store.ErrUnavailable) {
			t.Fatalf("option %d on an empty database: err = %v, want ErrUnavailable", opt, err)
		}
	}
	var tables int
	if err := rawPG(t, url).QueryRow(`SELECT count(*) FROM pg_tables WHERE schemaname = 'public'`).Scan(&tables); err != nil || tables != 0 {
		t.Fatalf("%d tables (err %v) after refused opens, want 0", tables, err)
	}
	openPG(t, url).Close()
	openPG(t, url, store.MustExist).Close()
	ro := openPG(t, url, store.ReadOnly)
	if err := ro.Client.Workspace.Create().SetID("w").SetName("w").SetRootPath("/w").Exec(ctx); err == nil {
		t.Fatal("a read-only store wrote a row")
	}
	if _, err := ro.Client.Workspace.Query().Count(ctx); err != nil {
		t.Fatalf("a read-only store cannot read: %v", err)
	}
	// Its transactions (read-only ones) take the write lock too.
	err := ro.WithTx(ctx, func(tx *ent.Tx) error { _, err := tx.Workspace.Query().Count(ctx); return err })
	if err != nil {
		t.Fatalf("a read-only store cannot read in a transaction: %v", err)
	}
}

// TestPostgresOpenErrorsHideThePassword: an error opening the database
// never shows the URL's password.
func TestPostgresOpenErrorsHideThePassword(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, url := range []string{
		"postgres://tuttid:s3cret-pw@[::1/db",                          // does not parse
		"postgres://tuttid:s3cret-pw@127.0.0.1:1/db?connect_timeout=2", // nobody listens
	} {
		_, err := store.Open(ctx, url)
		if !errors.Is(err, store.ErrUnavailable) {
			t.Fatalf("%s: err = %v, want ErrUnavailable", url, err)
		}
		if strings.Contains(err.Error(), "s3cret-pw") {
			t.Errorf("the error shows the password: %v", err)
		}
	}
}

// TestPostgresConnectionSettings is TestPragmas' counterpart: every pooled
// connection has the lock timeout (the busy timeout's counterpart) unless
// the URL sets its own.
func TestPostgresConnectionSettings(t *testing.T) {
	ctx := context.Background()
	base := pgtest.URL(t)
	for _, c := range []struct{ url, want string }{
		{base, "30s"},
		{base + "&lock_timeout=250ms", "250ms"},
	} {
		st := openPG(t, c.url)
		// Hold several connections at once so that each is a new one.
		conns := make([]*sql.Conn, 4)
		for i := range conns {
			conn, err := st.DB.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			conns[i] = conn
			var got string
			if err := conn.QueryRowContext(ctx, "SHOW lock_timeout").Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("conn %d: lock_timeout = %s, want %s", i, got, c.want)
			}
		}
	}
}

// TestPostgresWriteTransactionsRunOneAtATime is the counterpart of
// `_txlock=immediate` (TestConcurrentWritersSeeNoBusy runs on both): a
// write transaction waits for the one in progress, at most lock_timeout,
// then fails; statements outside transactions do not wait for it.
func TestPostgresWriteTransactionsRunOneAtATime(t *testing.T) {
	ctx := context.Background()
	st := openPG(t, pgtest.URL(t)+"&lock_timeout=300ms")
	seed(t, st, map[string]string{"s": "w"})

	holding, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		err := st.WithTx(ctx, func(tx *ent.Tx) error {
			close(holding)
			<-release
			return tx.AgentSession.UpdateOneID("s").SetTitle("first").Exec(ctx)
		})
		if err != nil {
			t.Errorf("first transaction: %v", err)
		}
	}()
	<-holding
	start := time.Now()
	err := st.WithTx(ctx, func(tx *ent.Tx) error { return nil })
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "55P03" {
		t.Errorf("second transaction while the first holds the lock: err = %v, want lock_not_available (55P03)", err)
	}
	if waited := time.Since(start); waited < 250*time.Millisecond {
		t.Errorf("the second transaction failed after %v, before the lock timeout", waited)
	}
	if err := st.Client.Workspace.Create().SetID("w2").SetName("w2").SetRootPath("/w2").Exec(ctx); err != nil {
		t.Errorf("a statement outside any transaction waited for the lock: %v", err)
	}
	close(release)
	wg.Wait()
	if err := st.WithTx(ctx, func(tx *ent.Tx) error { return tx.AgentSession.UpdateOneID("s").SetTitle("second").Exec(ctx) }); err != nil {
		t.Fatalf("a transaction after the first ended: %v", err)
	}
}

// TestPostgresSchema is TestMigrationCreatesLineageTableAndParentIndex's
// counterpart: the spec's keys and constraints, the partial indexes with
// their literal conditions, and JSON kept as bytes.
func TestPostgresSchema(t *testing.T) {
	url := pgtest.URL(t)
	openPG(t, url)
	db := rawPG(t, url)
	indexes := map[string]string{}
	rows, err := db.Query(`SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name, def string
		if err := rows.Scan(&name, &def); err != nil {
			t.Fatal(err)
		}
		indexes[name] = def
	}
	rows.Close()
	for name, want := range map[string]string{
		"message_in_progress":                                      "ON public.workspace_agent_messages USING btree (status) WHERE ((status)::text = 'in_progress'::text)",
		"turn_in_progress":                                         "ON public.workspace_agent_turns USING btree (status) WHERE ((status)::text = 'IN_PROGRESS'::text)",
		"idx_workspace_agent_session_forks_parent":                 "ON public.workspace_agent_session_forks USING btree (workspace_id, parent_agent_session_id)",
		"sessionfork_workspace_id_fork_request_id":                 "CREATE UNIQUE INDEX sessionfork_workspace_id_fork_request_id ON public.workspace_agent_session_forks USING btree (workspace_id, fork_request_id)",
		"workspace_agent_session_forks_child_agent_session_id_key": "UNIQUE INDEX",
		"message_agent_session_id_message_id":                      "UNIQUE INDEX",
		"message_agent_session_id_version":                         "UNIQUE INDEX",
		"turn_agent_session_id_turn_id":                            "UNIQUE INDEX",
		"sessionfork_parent_agent_session_id":                      "(parent_agent_session_id)",
	} {
		if def, ok := indexes[name]; !ok || !strings.Contains(def, want) {
			t.Errorf("index %s = %q, want it to contain %q", name, def, want)
		}
	}
	var cascades int
	if err := db.QueryRow(`SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND confdeltype = 'c'`).Scan(&cascades); err != nil {
		t.Fatal(err)
	}
	// sessions->workspace, messages, turns, approvals, forks (child and
	// parent), code; explorations->session, branches->exploration, check
	// runs->session.
	if cascades != 10 {
		t.Errorf("%d cascading foreign keys, want 10", cascades)
	}
	// Every JSON field of the ent schema (Strings are JSON too), and nothing
	// else, is bytea.
	rows, err = db.Query(`SELECT column_name FROM information_schema.columns
		WHERE table_schema = 'public' AND data_type = 'bytea' ORDER BY column_name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var bytea []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			t.Fatal(err)
		}
		bytea = append(bytea, c)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	// settings_json twice: a session's and an exploration branch's; paths: an apply journal entry's.
	want := []string{"available_decisions", "content_json", "details_json", "paths", "runtime_context_json", "settings_json", "settings_json", "token_usage_json"}
	if !slices.Equal(bytea, want) {
		t.Errorf("bytea columns %v, want the JSON fields %v", bytea, want)
	}
}

// TestPostgresKeepsJSONBytes: a JSON field comes back byte for byte (as
// on SQLite), not reordered as jsonb would.
func TestPostgresKeepsJSONBytes(t *testing.T) {
	ctx := context.Background()
	st := openPG(t, pgtest.URL(t))
	seed(t, st, map[string]string{"s": "w"})
	raw := `{"z":1,"a":[2,1],"m":"é"}`
	m, err := st.Client.Message.Create().SetMessageID("m").SetAgentSessionID("s").SetWorkspaceID("w").SetRole("user").
		SetVersion(1).SetContent([]byte(raw)).Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := st.Client.Message.GetX(ctx, m.ID)
	if string(got.Content) != raw {
		t.Errorf("content = %s, want %s", got.Content, raw)
	}
	a := st.Client.AgentSession.GetX(ctx, "s")
	if a.Settings != (agent.ComposerSettings{}) {
		t.Errorf("settings = %+v", a.Settings)
	}
}

// TestPostgresStoresAnyText: text with a NUL or bytes that are not UTF-8,
// which PostgreSQL's text refuses, is stored with U+FFFD in their place,
// where SQLite keeps it as it is; valid text comes back unchanged.
func TestPostgresStoresAnyText(t *testing.T) {
	ctx := context.Background()
	st := openPG(t, pgtest.URL(t))
	seed(t, st, map[string]string{"s": "w"})
	for i, c := range []struct{ in, want string }{
		{"plain é ✓", "plain é ✓"},
		{"out\x00put", "out\uFFFDput"},
		{"bad \xff\xfe bytes", "bad \uFFFD bytes"},
	} {
		err := st.WithTx(ctx, func(tx *ent.Tx) error {
			return tx.Message.Create().SetMessageID(fmt.Sprint(i)).SetAgentSessionID("s").SetWorkspaceID("w").
				SetRole("tool").SetVersion(int64(i + 1)).SetText(c.in).Exec(ctx)
		})
		if err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		if got := st.Client.Message.Query().Where(message.MessageID(fmt.Sprint(i))).OnlyX(ctx).Text; got != c.want {
			t.Errorf("stored %q as %q, want %q", c.in, got, c.want)
		}
	}
	// A text[] argument (a fork's history goes in as arrays) is made safe
	// string by string, and the caller's slice is left as it was.
	in := []string{"plain é ✓", "out\x00put", "bad \xff\xfe bytes"}
	var got string
	if err := st.DB.QueryRowContext(ctx, `SELECT string_agg(x, '|') FROM unnest($1::text[]) AS x`, in).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if want := "plain é ✓|out\uFFFDput|bad \uFFFD bytes"; got != want || in[1] != "out\x00put" {
		t.Errorf("text[] stored as %q, want %q (argument now %q)", got, want, in)
	}
}

// TestPostgresCompressesHistoryWithLZ4: a message's text and item JSON are
// compressed with lz4, not pglz (a 16 MB fork took 2.3x its SQLite time
// with pglz); opening the database again changes nothing.
func TestPostgresCompressesHistoryWithLZ4(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	for range 2 {
		st := openPG(t, url)
		for _, col := range []string{"text", "content_json"} {
			var method string
			if err := st.DB.QueryRowContext(ctx, `SELECT attcompression::text FROM pg_attribute WHERE attrelid = 'workspace_agent_messages'::regclass AND attname = $1`, col).Scan(&method); err != nil {
				t.Fatal(err)
			}
			if method != "l" {
				t.Errorf("%s compression %q, want l (lz4)", col, method)
			}
		}
		st.Close()
	}
}
