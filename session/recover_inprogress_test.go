package session

import (
	"context"
	"strings"
	"testing"
)

// TestReconcileReadsOnlyWhatWasInProgress: the statements Reconcile sends
// for the items and turns a run left in progress are planned on their
// partial indexes, not as scans of every message and turn (which made a
// server start read its whole database).
func TestReconcileReadsOnlyWhatWasInProgress(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	counted, count := e.st.Counting()
	svc := New(Config{Store: counted})
	if err := svc.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"workspace_agent_messages": "message_in_progress", "workspace_agent_turns": "turn_in_progress"}
	for _, q := range count.Statements() {
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
