package lineage_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"tuttid/agent"
	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/lineage"
)

// TestTreeSessionsAreEntities: the sessions Tree and Ancestors return
// (scanned by the generated AllWithStrings, which reuses its scan buffers
// from row to row) are the stored rows field for field, each its own,
// with values and NULLs alternating from row to row, and they are ent
// entities of the client: their edges can be queried.
func TestTreeSessionsAreEntities(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.workspace(t, "w")
	ctx := context.Background()
	const n = 6
	names := make([]string, n)
	var edges []edge
	for i := range names {
		names[i] = fmt.Sprintf("s%d", i)
		c := e.st.Client.AgentSession.Create().SetID(names[i]).SetWorkspaceID("w").
			SetTitle("title " + names[i]).SetProvider(agent.ProviderCodex).
			SetProviderSessionID("thread-" + names[i]).SetCwd(fmt.Sprintf("/src/%d", i)).
			SetLastMessageVersion(int64(100 + i)).
			SetCreatedAt(time.Date(2026, 1, 1, 0, 0, i, 123456789, time.UTC))
		if i%2 == 0 {
			c.SetSettings(agent.ComposerSettings{Model: fmt.Sprintf("model-%d", i), PlanMode: true}).
				SetRuntimeContext(map[string]any{"branch": names[i]}).
				SetArchived(true).SetStatus(agentsession.StatusWORKING)
		} else {
			c.SetSettings(agent.ComposerSettings{}) // no runtime context: NULL
		}
		if err := c.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			edges = append(edges, edge{names[i-1], names[i], int64(i)})
		}
	}
	e.forks(t, "w", edges...)
	stored, err := e.st.Client.AgentSession.Query().All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]*ent.AgentSession{}
	for _, s := range stored {
		want[s.ID] = s
	}

	nodes, err := lineage.Tree(ctx, e.c, "w", names[n-1])
	if err != nil || len(nodes) != n {
		t.Fatalf("Tree: %d nodes, %v", len(nodes), err)
	}
	anc, err := lineage.Ancestors(ctx, e.c, "w", names[n-1])
	if err != nil || len(anc) != n-1 {
		t.Fatalf("Ancestors: %d sessions, %v", len(anc), err)
	}
	got := anc
	for _, node := range nodes {
		got = append(got, node.Session)
	}
	for _, s := range got {
		w := want[s.ID]
		if w == nil {
			t.Fatalf("session %q was not stored", s.ID)
		}
		if s.String() != w.String() || !s.CreatedAt.Equal(w.CreatedAt) ||
			!reflect.DeepEqual(s.RuntimeContext, w.RuntimeContext) || s.Settings != w.Settings {
			t.Errorf("read by lineage:\n%v %v %#v\nstored:\n%v %v %#v", s, s.CreatedAt, s.RuntimeContext, w, w.CreatedAt, w.RuntimeContext)
		}
		ws, err := s.QueryWorkspace().OnlyID(ctx)
		if err != nil || ws != "w" {
			t.Errorf("%s's workspace edge: %q, %v", s.ID, ws, err)
		}
	}
}
