package store_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/ent/message"
	"tuttid/store"
	"tuttid/store/pgtest"
)

// The databases of today's tuttid: made by the program in
// store/testdata/README.md, SQLite by main at ce74eb8 (before PostgreSQL)
// and PostgreSQL by the first tuttid that ran on it (a88597d), dumped
// with pg_dump --inserts.
const (
	sqliteOfToday   = "testdata/sqlite-ce74eb8.sqlite"
	postgresOfToday = "testdata/postgres-a88597d.sql"
)

// todaysSQLite is a copy of today's SQLite database in t's temp dir.
func todaysSQLite(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(sqliteOfToday)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "tuttid.db")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// todaysPostgres is a new PostgreSQL database restored from today's dump.
func todaysPostgres(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(postgresOfToday)
	if err != nil {
		t.Fatal(err)
	}
	var dump strings.Builder
	for line := range strings.Lines(string(b)) {
		if !strings.HasPrefix(line, `\`) { // psql's \restrict, not SQL
			dump.WriteString(line)
		}
	}
	url := pgtest.URL(t)
	if _, err := rawPG(t, url).Exec(dump.String()); err != nil {
		t.Fatalf("restore %s: %v", postgresOfToday, err)
	}
	return url
}

// checkTodaysRows checks the rows of the databases of today survived.
func checkTodaysRows(t *testing.T, st *store.Store) {
	t.Helper()
	ctx := context.Background()
	for what, n := range map[string]int{
		"sessions":    st.Client.AgentSession.Query().CountX(ctx),
		"messages":    st.Client.Message.Query().CountX(ctx),
		"turns":       st.Client.Turn.Query().CountX(ctx),
		"forks":       st.Client.SessionFork.Query().CountX(ctx),
		"journal":     st.Client.ForkJournal.Query().CountX(ctx),
		"approvals":   st.Client.ApprovalRequest.Query().CountX(ctx),
		"in progress": st.Client.Message.Query().Where(message.Status("in_progress")).CountX(ctx),
	} {
		want := map[string]int{"sessions": 2, "messages": 4, "turns": 2, "forks": 1, "journal": 1, "approvals": 1, "in progress": 2}[what]
		if n != want {
			t.Errorf("%d %s, want %d", n, what, want)
		}
	}
	m := st.Client.Message.Query().Where(message.AgentSessionID("child"), message.MessageID("m2")).OnlyX(ctx)
	if want := `{"type":"agentMessage","b":1,"a":2}`; string(m.Content) != want || m.Version != 2 {
		t.Errorf("message m2 = %s v%d, want %s v2", m.Content, m.Version, want)
	}
	ap := st.Client.ApprovalRequest.GetX(ctx, "ap1")
	if strings.Join(ap.AvailableDecisions, ",") != "ACCEPT,DECLINE" {
		t.Errorf("available decisions = %v", ap.AvailableDecisions)
	}
	// The version counter goes on from today's.
	a := st.Client.AgentSession.GetX(ctx, "root")
	if a.LastMessageVersion != 2 || a.Title != "title root" {
		t.Errorf("session root = v%d %q", a.LastMessageVersion, a.Title)
	}
}

// TestMigratesTheDatabasesOfToday: a database made by today's tuttid, on
// either backend, opens (and migrates) at start with every row kept, and
// takes new rows under the constraints.
func TestMigratesTheDatabasesOfToday(t *testing.T) {
	for name, location := range map[string]func(*testing.T) string{
		"sqlite":   todaysSQLite,
		"postgres": todaysPostgres,
	} {
		t.Run(name, func(t *testing.T) {
			st := openPG(t, location(t))
			checkTodaysRows(t, st)
			ctx := context.Background()
			err := st.Client.SessionFork.Create().SetWorkspaceID("w").SetParentAgentSessionID("child").
				SetChildAgentSessionID("root").SetForkRequestID("req-1").SetForkedAtUnixMs(1).Exec(ctx)
			if !ent.IsConstraintError(err) {
				t.Errorf("a second lineage row with request id req-1: err = %v, want a constraint error", err)
			}
		})
	}
}

// TestMigrationAddsWhatALaterTuttidAdds: a database missing a column and
// an index that the schema has (as a database of an older tuttid would)
// gets them at start, on either backend, its rows kept.
func TestMigrationAddsWhatALaterTuttidAdds(t *testing.T) {
	for _, c := range []struct {
		name     string
		location func(*testing.T) string
		drop     []string
	}{
		{"sqlite", todaysSQLite, []string{
			"DROP INDEX agentsession_provider_session_id",
			"ALTER TABLE workspace_agent_sessions DROP COLUMN archived"}},
		{"postgres", todaysPostgres, []string{
			"DROP INDEX agentsession_provider_session_id",
			"ALTER TABLE workspace_agent_sessions DROP COLUMN archived"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			loc := c.location(t)
			st := openPG(t, loc)
			for _, q := range c.drop {
				if _, err := st.DB.ExecContext(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			st.Close()
			st = openPG(t, loc)
			checkTodaysRows(t, st)
			if n := st.Client.AgentSession.Query().Where(agentsession.Archived(false)).CountX(ctx); n != 2 {
				t.Errorf("%d sessions not archived after the column came back, want 2", n)
			}
			var q string
			switch st.Dialect() {
			case store.SQLite:
				q = `SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'agentsession_provider_session_id'`
			default:
				q = `SELECT count(*) FROM pg_indexes WHERE indexname = 'agentsession_provider_session_id'`
			}
			var n int
			if err := st.DB.QueryRowContext(ctx, q).Scan(&n); err != nil || n != 1 {
				t.Errorf("index agentsession_provider_session_id: %d (err %v), want it back", n, err)
			}
		})
	}
}
