package lineage_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"tuttid/lineage"
)

// The tree of 10,000 sessions: a root, a chain of 1,000 forks
// below it (its deepest session has 1,000 ancestors) and a fan of 8,999
// forks of the root.
const (
	chainDepth = 1000
	treeSize   = 10000
)

// chainAndFan builds that tree in workspace w and returns its root, the
// chain's deepest session and one session of the fan. Rows go in chunks:
// SQLite bounds the parameters of one statement.
func chainAndFan(t testing.TB, e *env) (root, deepest, fanned string) {
	t.Helper()
	names := make([]string, treeSize)
	for i := range names {
		names[i] = fmt.Sprintf("s-%05d", i)
	}
	var edges []edge
	for i := 1; i < treeSize; i++ {
		parent := names[0] // the fan
		if i <= chainDepth {
			parent = names[i-1] // the chain
		}
		edges = append(edges, edge{parent, names[i], int64(i)})
	}
	const chunk = 1000
	for i := 0; i < len(names); i += chunk {
		e.sessions(t, "w", names[i:min(i+chunk, len(names))]...)
	}
	for i := 0; i < len(edges); i += chunk {
		e.forks(t, "w", edges[i:min(i+chunk, len(edges))]...)
	}
	return names[0], names[chainDepth], names[treeSize-1]
}

// The baselines: one recursive CTE through database/sql on the same file.
// rowsSQL returns what a lineage read returns (each session's row and the
// lineage row where it is the child), scanned into typed values; idsSQL
// only the ids the walk reaches.
const (
	upCTE = `up(id) AS (
  SELECT ? UNION
  SELECT f.parent_agent_session_id FROM up CROSS JOIN workspace_agent_session_forks f
   WHERE f.workspace_id = ? AND f.child_agent_session_id = up.id)`
	downCTE = `down(id) AS (
  SELECT id FROM up UNION
  SELECT f.child_agent_session_id FROM down CROSS JOIN workspace_agent_session_forks f
   WHERE f.workspace_id = ? AND f.parent_agent_session_id = down.id)`
	rowsSelect = `SELECT s.agent_session_id, s.workspace_id, s.provider, s.provider_session_id, s.title,
  s.status, s.visible, s.archived, s.cwd, s.settings_json, s.runtime_context_json,
  s.last_message_version, s.created_at, s.updated_at,
  f.id, f.parent_agent_session_id, f.child_provider_session_id, f.parent_provider_session_id,
  f.provider, f.fork_turn_id, f.fork_request_id, f.fork_request_fingerprint, f.forked_at_unix_ms
 FROM walk x CROSS JOIN workspace_agent_sessions s ON s.agent_session_id = x.id
 LEFT JOIN workspace_agent_session_forks f ON f.child_agent_session_id = s.agent_session_id
 WHERE s.workspace_id = ?`
	chainRowsSQL = `WITH RECURSIVE ` + upCTE + ", walk AS (SELECT id FROM up) " + rowsSelect + ` AND s.agent_session_id <> ?`
	treeRowsSQL  = `WITH RECURSIVE ` + upCTE + ", " + downCTE + ", walk AS (SELECT id FROM down) " + rowsSelect
	chainIDsSQL  = `WITH RECURSIVE ` + upCTE + ` SELECT id FROM up`
	treeIDsSQL   = `WITH RECURSIVE ` + upCTE + ", " + downCTE + ` SELECT id FROM down`
)

// rawRows runs query and scans each row into typed values; it returns
// the number of rows.
func rawRows(b *testing.B, db *sql.DB, query string, args ...any) int {
	rows, err := db.Query(query, args...)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		b.Fatal(err)
	}
	var (
		strs           [16]sql.NullString
		ints           [4]sql.NullInt64
		created, upd   time.Time
		settings, rctx []byte
	)
	n := 0
	for rows.Next() {
		var dest []any
		if len(cols) == 1 {
			dest = []any{&strs[0]}
		} else {
			dest = []any{&strs[0], &strs[1], &strs[2], &strs[3], &strs[4], &strs[5], &ints[0], &ints[1], &strs[6],
				&settings, &rctx, &ints[2], &created, &upd,
				&ints[3], &strs[7], &strs[8], &strs[9], &strs[10], &strs[11], &strs[12], &strs[13], &strs[14]}
		}
		if err := rows.Scan(dest...); err != nil {
			b.Fatal(err)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	return n
}

// BenchmarkLineage10k times Ancestors of the chain's deepest session and
// Tree from three places of the 10,000-session tree against one raw
// recursive CTE through database/sql selecting the same rows, alternating
// on the same file: ratio is lineage's time over that CTE's. ratio-ids is
// over a CTE that selects only the ids (no session rows at all).
func BenchmarkLineage10k(b *testing.B) {
	e := newEnv(b)
	e.workspace(b, "w")
	root, deepest, fanned := chainAndFan(b, e)
	ctx := context.Background()
	cases := []struct {
		name      string
		want      int
		run       func() (int, error)
		rows, ids string
		args      []any
	}{{
		name: "ancestors", want: chainDepth,
		run: func() (int, error) {
			anc, err := lineage.Ancestors(ctx, e.c, "w", deepest)
			return len(anc), err
		},
		rows: chainRowsSQL, ids: chainIDsSQL,
		args: []any{deepest, "w", "w", deepest},
	}}
	for _, from := range []struct{ name, id string }{{"root", root}, {"deepest", deepest}, {"fanned", fanned}} {
		cases = append(cases, struct {
			name      string
			want      int
			run       func() (int, error)
			rows, ids string
			args      []any
		}{
			name: "tree/from=" + from.name, want: treeSize,
			run: func() (int, error) {
				nodes, err := lineage.Tree(ctx, e.c, "w", from.id)
				return len(nodes), err
			},
			rows: treeRowsSQL, ids: treeIDsSQL,
			args: []any{from.id, "w", "w", "w"},
		})
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var tuttid, rows, ids time.Duration
			for range b.N {
				start := time.Now()
				n, err := c.run()
				tuttid += time.Since(start)
				if err != nil || n != c.want {
					b.Fatalf("lineage: %d sessions, %v; want %d", n, err, c.want)
				}
				start = time.Now()
				n = rawRows(b, e.st.DB, c.rows, c.args...)
				rows += time.Since(start)
				if n != c.want {
					b.Fatalf("raw CTE: %d rows, want %d", n, c.want)
				}
				start = time.Now()
				n = rawRows(b, e.st.DB, c.ids, c.args[:len(c.args)-1]...)
				ids += time.Since(start)
				if n != c.want+1 && n != c.want {
					b.Fatalf("raw CTE ids: %d rows, want %d", n, c.want)
				}
			}
			b.ReportMetric(float64(tuttid.Microseconds())/float64(b.N), "tuttid-µs/op")
			b.ReportMetric(float64(rows.Microseconds())/float64(b.N), "rawcte-µs/op")
			b.ReportMetric(float64(tuttid)/float64(rows), "ratio")
			b.ReportMetric(float64(tuttid)/float64(ids), "ratio-ids")
		})
	}
}

// TestConstantQueries10k: on the tree of 10,000 sessions,
// Ancestors of the chain's deepest session and Tree from its root, its
// deepest session and a session of the fan each cost one SQL statement,
// as on a tree of three, and return every session.
func TestConstantQueries10k(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.workspace(t, "w")
	ctx := context.Background()
	small := chain(t, e, "small", 2)
	e.count.Reset()
	if anc, err := lineage.Ancestors(ctx, e.c, "w", small[2]); err != nil || len(anc) != 2 {
		t.Fatalf("Ancestors on three sessions: %v, %v", ids(anc), err)
	}
	if nodes, err := lineage.Tree(ctx, e.c, "w", small[1]); err != nil || len(nodes) != 3 {
		t.Fatalf("Tree on three sessions: %d nodes, %v", len(nodes), err)
	}
	if n := e.count.Reset(); n != 2 {
		t.Fatalf("Ancestors and Tree on three sessions took %d statements, want 1 each", n)
	}

	root, deepest, fanned := chainAndFan(t, e)
	anc, err := lineage.Ancestors(ctx, e.c, "w", deepest)
	if n := e.count.Reset(); err != nil || n != 1 {
		t.Fatalf("Ancestors on 10,000 sessions: %d statements, %v; want 1", n, err)
	}
	if len(anc) != chainDepth || anc[0].ID != root || anc[len(anc)-1].ID == deepest {
		t.Fatalf("Ancestors(%s) has %d sessions from %s", deepest, len(anc), anc[0].ID)
	}
	for _, from := range []string{root, deepest, fanned} {
		nodes, err := lineage.Tree(ctx, e.c, "w", from)
		if n := e.count.Reset(); err != nil || n != 1 {
			t.Fatalf("Tree(%s) on 10,000 sessions: %d statements, %v; want 1", from, n, err)
		}
		if len(nodes) != treeSize || nodes[0].Session.ID != root {
			t.Fatalf("Tree(%s): %d nodes from %s, want %d from %s", from, len(nodes), nodes[0].Session.ID, treeSize, root)
		}
		depth := map[string]int{}
		for _, n := range nodes {
			depth[n.Session.ID] = n.Depth
		}
		if depth[deepest] != chainDepth || depth[fanned] != 1 {
			t.Fatalf("Tree(%s): depth of %s = %d, of %s = %d", from, deepest, depth[deepest], fanned, depth[fanned])
		}
	}
}

// TestTreeForkRows: the lineage row Tree reads beside each session (in
// the same query) is the stored row, field for field, even when the
// client-chosen request id holds the separator the query joins them with.
func TestTreeForkRows(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.workspace(t, "w")
	e.sessions(t, "w", "p", "c")
	err := e.st.Client.SessionFork.Create().SetWorkspaceID("w").
		SetParentAgentSessionID("p").SetChildAgentSessionID("c").
		SetParentProviderSessionID("thread-p").SetChildProviderSessionID("thread-c").
		SetProvider("codex").SetForkTurnID("turn-7").SetForkRequestID("req\x1fwith\x1fseparators").
		SetForkRequestFingerprint("fp-1").SetForkedAtUnixMs(1234567890123).Exec(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want, err := e.st.Client.SessionFork.Query().Only(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := lineage.Tree(context.Background(), e.c, "w", "c")
	if err != nil || len(nodes) != 2 {
		t.Fatalf("Tree: %d nodes, %v", len(nodes), err)
	}
	if nodes[0].Fork != nil {
		t.Fatalf("the root has a lineage row: %+v", nodes[0].Fork)
	}
	got := nodes[1].Fork
	if got == nil || got.String() != want.String() {
		t.Fatalf("lineage row read by Tree:\n%v\nstored:\n%v", got, want)
	}
}
