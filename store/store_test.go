package store_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"tuttid/agent"
	"tuttid/ent"
	"tuttid/store"
	"tuttid/store/storetest"
)

// openStore opens a fresh database file in t.TempDir and closes it when the
// test ends.
func openStore(t *testing.T) (*store.Store, string) {
	t.Helper()
	path := storetest.Location(t) // a file, or PostgreSQL under TUTTID_TEST_DB
	st, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st, path
}

type column struct {
	typ     string
	notNull bool
	dflt    sql.NullString
}

func tableInfo(t *testing.T, db *sql.DB, table string) map[string]column {
	t.Helper()
	rows, err := db.Query(`SELECT name, type, "notnull", dflt_value FROM pragma_table_info(?)`, table)
	if err != nil {
		t.Fatalf("table_info(%s): %v", table, err)
	}
	defer rows.Close()
	cols := map[string]column{}
	for rows.Next() {
		var name string
		var c column
		if err := rows.Scan(&name, &c.typ, &c.notNull, &c.dflt); err != nil {
			t.Fatal(err)
		}
		cols[name] = c
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return cols
}

type indexInfo struct {
	unique  bool
	columns []string
}

// indexes lists a table's indexes with their columns in index order.
func indexes(t *testing.T, db *sql.DB, table string) map[string]indexInfo {
	t.Helper()
	rows, err := db.Query(`SELECT name, "unique" FROM pragma_index_list(?)`, table)
	if err != nil {
		t.Fatalf("index_list(%s): %v", table, err)
	}
	out := map[string]indexInfo{}
	var names []string
	for rows.Next() {
		var name string
		var unique bool
		if err := rows.Scan(&name, &unique); err != nil {
			t.Fatal(err)
		}
		out[name] = indexInfo{unique: unique}
		names = append(names, name)
	}
	rows.Close()
	for _, name := range names {
		rows, err := db.Query(`SELECT name FROM pragma_index_info(?) ORDER BY seqno`, name)
		if err != nil {
			t.Fatalf("index_info(%s): %v", name, err)
		}
		info := out[name]
		for rows.Next() {
			var col string
			if err := rows.Scan(&col); err != nil {
				t.Fatal(err)
			}
			info.columns = append(info.columns, col)
		}
		rows.Close()
		out[name] = info
	}
	return out
}

func TestMigrationCreatesLineageTableAndParentIndex(t *testing.T) {
	sqliteOnly(t, "TestPostgresSchema")
	st, _ := openStore(t)

	var n int
	if err := st.DB.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'workspace_agent_session_forks'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("sqlite_master has %d tables named workspace_agent_session_forks, want 1", n)
	}

	// The spec's columns: every one NOT NULL; the text ones default to ''.
	cols := tableInfo(t, st.DB, "workspace_agent_session_forks")
	for _, tc := range []struct {
		name, typ    string
		emptyDefault bool
	}{
		{"workspace_id", "TEXT", false},
		{"child_agent_session_id", "TEXT", false},
		{"parent_agent_session_id", "TEXT", false},
		{"child_provider_session_id", "TEXT", true},
		{"parent_provider_session_id", "TEXT", true},
		{"provider", "TEXT", true},
		{"fork_turn_id", "TEXT", true},
		{"fork_request_id", "TEXT", true},
		{"fork_request_fingerprint", "TEXT", true},
		{"forked_at_unix_ms", "INTEGER", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, ok := cols[tc.name]
			if !ok {
				t.Fatalf("column %s missing; have %v", tc.name, cols)
			}
			if !strings.EqualFold(c.typ, tc.typ) {
				t.Errorf("type = %q, want %s", c.typ, tc.typ)
			}
			if !c.notNull {
				t.Errorf("column is nullable, want NOT NULL")
			}
			if tc.emptyDefault && (!c.dflt.Valid || strings.Trim(c.dflt.String, "()") != "''") {
				t.Errorf("default = %v, want ''", c.dflt)
			}
		})
	}

	idx := indexes(t, st.DB, "workspace_agent_session_forks")
	parent, ok := idx["idx_workspace_agent_session_forks_parent"]
	if !ok {
		t.Fatalf("index idx_workspace_agent_session_forks_parent missing; have %v", idx)
	}
	if want := []string{"workspace_id", "parent_agent_session_id"}; !slices.Equal(parent.columns, want) {
		t.Errorf("parent index columns = %v, want %v", parent.columns, want)
	}
	if parent.unique {
		t.Errorf("parent index is unique; a parent has many forks")
	}
	if !hasIndex(idx, true, "workspace_id", "fork_request_id") {
		t.Errorf("no unique index on (workspace_id, fork_request_id); have %v", idx)
	}
	// The spec's primary key (workspace_id, child_agent_session_id): a child
	// has one lineage row. Session ids are global, so uniqueness of the
	// child id alone is at least as strict.
	if !hasIndex(idx, true, "child_agent_session_id") && !hasIndex(idx, true, "workspace_id", "child_agent_session_id") {
		t.Errorf("no unique index on the child session; have %v", idx)
	}

	// Both foreign keys cascade.
	rows, err := st.DB.Query(`SELECT "from", "table", "to", on_delete FROM pragma_foreign_key_list('workspace_agent_session_forks')`)
	if err != nil {
		t.Fatal(err)
	}
	fks := map[string]string{}
	for rows.Next() {
		var from, table, to, onDelete string
		if err := rows.Scan(&from, &table, &to, &onDelete); err != nil {
			t.Fatal(err)
		}
		fks[from] = table + "." + to + " " + onDelete
	}
	rows.Close()
	for _, col := range []string{"child_agent_session_id", "parent_agent_session_id"} {
		if want := "workspace_agent_sessions.agent_session_id CASCADE"; fks[col] != want {
			t.Errorf("foreign key of %s = %q, want %q", col, fks[col], want)
		}
	}
}

func hasIndex(idx map[string]indexInfo, unique bool, cols ...string) bool {
	for _, i := range idx {
		if i.unique == unique && slices.Equal(i.columns, cols) {
			return true
		}
	}
	return false
}

// TestConnectionPragmas checks every pooled connection, not only the first:
// the pragmas come from the DSN, so each new connection must apply them.
func TestConnectionPragmas(t *testing.T) {
	sqliteOnly(t, "TestPostgresConnectionSettings")
	st, _ := openStore(t)
	ctx := context.Background()

	// Hold several connections at once so the pool has to open new ones.
	var conns []*sql.Conn
	for range 4 {
		c, err := st.DB.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i, c := range conns {
		for _, tc := range []struct{ pragma, want string }{
			{"foreign_keys", "1"},
			{"journal_mode", "wal"},
			{"busy_timeout", "30000"},
			{"synchronous", "1"}, // NORMAL
		} {
			var got string
			if err := c.QueryRowContext(ctx, "PRAGMA "+tc.pragma).Scan(&got); err != nil {
				t.Fatalf("conn %d: PRAGMA %s: %v", i, tc.pragma, err)
			}
			if !strings.EqualFold(got, tc.want) {
				t.Errorf("conn %d: PRAGMA %s = %q, want %q", i, tc.pragma, got, tc.want)
			}
		}
	}
}

// TestReopenKeepsData re-runs the migration on an existing file, both after
// closing it and while another Store has it open.
func TestReopenKeepsData(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "nested", "dir", "tuttid.db") // Open creates the directories
	st, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	w := st.Client.Workspace.Create().SetID("w1").SetName("one").SetRootPath("/tmp/one").SaveX(ctx)
	st.Client.AgentSession.Create().SetID("s1").SetWorkspaceID(w.ID).SetProvider(agent.ProviderCodex).
		SetTitle("kept").SetSettings(agent.ComposerSettings{Model: "m"}).SaveX(ctx)
	st.Client.AgentSession.Create().SetID("s2").SetWorkspaceID(w.ID).SetProvider(agent.ProviderCodex).
		SetSettings(agent.ComposerSettings{}).SaveX(ctx)
	st.Client.SessionFork.Create().SetWorkspaceID(w.ID).SetChildAgentSessionID("s2").
		SetParentAgentSessionID("s1").SetForkRequestID("r1").SetForkedAtUnixMs(1).SaveX(ctx)

	// A second Store on the same file while the first is open.
	again, err := store.Open(ctx, path)
	if err != nil {
		t.Fatalf("second Open on an open file: %v", err)
	}
	if n := again.Client.SessionFork.Query().CountX(ctx); n != 1 {
		t.Errorf("second store sees %d lineage rows, want 1", n)
	}
	again.Close()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	for i := range 2 {
		re, err := store.Open(ctx, path)
		if err != nil {
			t.Fatalf("reopen %d: %v", i, err)
		}
		s, err := re.Client.AgentSession.Get(ctx, "s1")
		if err != nil {
			t.Fatalf("reopen %d: session lost: %v", i, err)
		}
		if s.Title != "kept" || s.Settings.Model != "m" {
			t.Errorf("reopen %d: session = %+v", i, s)
		}
		f, err := re.Client.SessionFork.Query().Only(ctx)
		if err != nil {
			t.Fatalf("reopen %d: lineage row lost: %v", i, err)
		}
		if f.ChildAgentSessionID != "s2" || f.ParentAgentSessionID != "s1" {
			t.Errorf("reopen %d: lineage row = %+v", i, f)
		}
		if err := re.Ping(ctx); err != nil {
			t.Error(err)
		}
		re.Close()
	}
}

func TestWithTx(t *testing.T) {
	st, _ := openStore(t)
	ctx := context.Background()

	if err := st.WithTx(ctx, func(tx *ent.Tx) error {
		return tx.Workspace.Create().SetID("committed").SetName("c").SetRootPath("/c").Exec(ctx)
	}); err != nil {
		t.Fatal(err)
	}
	boom := errorString("boom")
	err := st.WithTx(ctx, func(tx *ent.Tx) error {
		if err := tx.Workspace.Create().SetID("rolled-back").SetName("r").SetRootPath("/r").Exec(ctx); err != nil {
			return err
		}
		return boom
	})
	if err != boom {
		t.Fatalf("WithTx = %v, want the callback's error", err)
	}
	ids := st.Client.Workspace.Query().IDsX(ctx)
	if !slices.Equal(ids, []string{"committed"}) {
		t.Fatalf("workspaces = %v, want only the committed one", ids)
	}
}

type errorString string

func (e errorString) Error() string { return string(e) }

// TestOpenPathWithURIChars: DSN escapes the path in its file: URI; unescaped,
// SQLite read '#' as a fragment (a#b/tuttid.db silently opened "a"), '?' as
// the query (the pragmas were lost) and "%20" as an escaped space.
func TestOpenPathWithURIChars(t *testing.T) {
	ctx := context.Background()
	for _, dir := range []string{"a#b", "a?b", "a%20b", "50%off"} {
		t.Run(dir, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), dir, "tuttid.db")
			st, err := store.Open(ctx, path)
			if err != nil {
				t.Fatalf("Open(%q): %v", path, err)
			}
			defer st.Close()
			var file string
			if err := st.DB.QueryRow(`SELECT file FROM pragma_database_list WHERE name = 'main'`).Scan(&file); err != nil {
				t.Fatal(err)
			}
			if file != path {
				t.Fatalf("opened %q, want %q", file, path)
			}
		})
	}
}
