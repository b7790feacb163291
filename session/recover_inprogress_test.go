package session

import (
	"context"
	"strings"
	"sync"
	"testing"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"tuttid/ent"
	"tuttid/store"
)

// planDriver records the statements the ent client sends.
type planDriver struct {
	dialect.Driver
	mu    sync.Mutex
	stmts []string
}

func (d *planDriver) Query(ctx context.Context, query string, args, v any) error {
	d.record(query)
	return d.Driver.Query(ctx, query, args, v)
}

func (d *planDriver) Exec(ctx context.Context, query string, args, v any) error {
	d.record(query)
	return d.Driver.Exec(ctx, query, args, v)
}

func (d *planDriver) record(q string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stmts = append(d.stmts, q)
}

// TestReconcileReadsOnlyWhatWasInProgress: the statements Reconcile sends
// for the items and turns a run left in progress are planned on their
// partial indexes, not as scans of every message and turn (which made a
// server start read its whole database).
func TestReconcileReadsOnlyWhatWasInProgress(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	d := &planDriver{Driver: entsql.OpenDB(dialect.SQLite, e.st.DB)}
	svc := New(Config{Store: &store.Store{Client: ent.NewClient(ent.Driver(d)), DB: e.st.DB}})
	if err := svc.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"workspace_agent_messages": "message_in_progress", "workspace_agent_turns": "turn_in_progress"}
	for _, q := range d.stmts {
		for table, index := range want {
			if !strings.Contains(q, "`"+table+"`") || !strings.Contains(q, "status") {
				continue
			}
			rows, err := e.st.DB.Query("EXPLAIN QUERY PLAN "+q, make([]any, strings.Count(q, "?"))...)
			if err != nil {
				t.Fatalf("explain %s: %v", q, err)
			}
			var plan []string
			for rows.Next() {
				var id, parent, unused int
				var detail string
				if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, detail)
			}
			rows.Close()
			if p := strings.Join(plan, "; "); !strings.Contains(p, "USING INDEX "+index) {
				t.Errorf("%s\nis planned as %q, want it on the partial index %s", q, p, index)
			}
			delete(want, table)
		}
	}
	for table := range want {
		t.Errorf("Reconcile sent no statement on %s's status", table)
	}
}
