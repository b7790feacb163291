package session

import (
	"slices"
	"testing"

	"tuttid/ent/migrate"
)

// TestMessageColumnsMatchSchema: InsertHistory's raw INSERT names every
// column of the messages table but the generated id, so a field added to
// or renamed in the ent schema fails here rather than at a fork.
func TestMessageColumnsMatchSchema(t *testing.T) {
	t.Parallel()
	var want []string
	for _, c := range migrate.WorkspaceAgentMessagesTable.Columns {
		if c.Name != "id" {
			want = append(want, c.Name)
		}
	}
	got := slices.Clone(messageColumns)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("InsertHistory's columns %v, schema's %v", got, want)
	}
}
