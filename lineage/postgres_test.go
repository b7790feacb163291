package lineage

import (
	"context"
	"strings"
	"testing"

	"tuttid/store"
	"tuttid/store/pgtest"
)

// TestPostgresLineagePlan is the PostgreSQL side of the CROSS JOIN order
// of the recursive walks (upCTE, downCTE): on a workspace of 5,000
// sessions with a chain of 2,000 forks, PostgreSQL plans each recursive
// step as an index lookup of the lineage table, never a scan of it, so
// that the walk is not quadratic in the depth (postgresSteps).
func TestPostgresLineagePlan(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, q := range []string{
		`INSERT INTO workspaces (workspace_id, name, root_path, created_at, updated_at) VALUES ('w', 'w', '/w', now(), now())`,
		`INSERT INTO workspace_agent_sessions (agent_session_id, workspace_id, provider, provider_session_id, title, status, visible, archived, cwd, settings_json, last_message_version, created_at, updated_at)
		 SELECT 's' || g, 'w', 'codex', '', '', 'READY', true, false, '', '\x7b7d', 0, now(), now() FROM generate_series(1, 5000) g`,
		`INSERT INTO workspace_agent_session_forks (workspace_id, child_agent_session_id, parent_agent_session_id, child_provider_session_id, parent_provider_session_id, provider, fork_turn_id, fork_request_id, fork_request_fingerprint, forked_at_unix_ms)
		 SELECT 'w', 's' || (g + 1), 's' || g, '', '', 'codex', '', 'r' || g, '', g FROM generate_series(1, 2000) g`,
		`ANALYZE`,
	} {
		if _, err := st.DB.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name, walk string
		args       []any
	}{
		{"ancestors", chainSQL, []any{"s2001", "w"}},
		{"tree", treeSQL, []any{"s1000", "w", "w"}},
		{"subtree", subtreeSQL, []any{"s1", "w"}},
		{"both chains", bothChainsSQL, []any{"s2001", "s1500", "w"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			// What in sends on PostgreSQL.
			q := store.Postgres.Rebind(`SELECT agent_session_id FROM workspace_agent_sessions WHERE agent_session_id IN (` + postgresSteps.Replace(c.walk) + `)`)
			rows, err := st.DB.QueryContext(ctx, "EXPLAIN "+q, c.args...)
			if err != nil {
				t.Fatal(err)
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
			p := strings.Join(plan, "\n")
			if strings.Contains(p, "Seq Scan on workspace_agent_session_forks") || !strings.Contains(p, "Index") {
				t.Errorf("the walk scans the lineage table:\n%s", p)
			}
			// And the walk itself answers: the whole chain.
			var n int
			if err := st.DB.QueryRowContext(ctx, `SELECT count(*) FROM (`+q+`) AS w`, c.args...).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if want := map[string]int{"ancestors": 2001, "tree": 2001, "subtree": 2001, "both chains": 2001}[c.name]; n != want {
				t.Errorf("%d sessions, want %d", n, want)
			}
		})
	}
}
