package main

import (
	"path/filepath"
	"slices"
	"testing"

	"tuttid/codex/codextest"
)

// TestInstancesStartTogether: four tuttid processes started at the same
// moment on one empty PostgreSQL database all come up (before the
// migration lock, all but one exited with `relation ... already exists`)
// and each registers; store's TestPostgresInstancesMigrateAtOnce holds the
// migration itself.
func TestInstancesStartTogether(t *testing.T) {
	c := newCluster(t)
	ids := []string{"a", "b", "c", "d"}
	homes := map[string]string{}
	for _, id := range ids {
		homes[id] = filepath.Join(lingeringTempDir(t), "codex")
		if err := codextest.WriteCodexHome(homes[id], c.model.URL()); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("at once", func(t *testing.T) {
		for _, id := range ids {
			t.Run(id, func(t *testing.T) {
				t.Parallel()
				p := startTuttid(t, c.db, c.bin, homes[id], "TUTTID_INSTANCE_ID="+id)
				if code, body := p.raw(`{ workspaces { id } }`, nil); code != 200 {
					t.Errorf("instance %s answers %d: %s", id, code, body)
				}
			})
		}
	})
	var got []string
	for _, in := range c.instances() {
		got = append(got, in.ID)
	}
	slices.Sort(got)
	if !slices.Equal(got, ids) {
		t.Errorf("instances registered: %v, want %v", got, ids)
	}
}
