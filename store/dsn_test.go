package store

import (
	"strings"
	"testing"
)

func TestDSN(t *testing.T) {
	d := dsn("/data/tuttid.db")
	for _, want := range []string{"file:/data/tuttid.db?", "_txlock=immediate", "foreign_keys%281%29", "journal_mode%28WAL%29", "busy_timeout%2830000%29", "journal_size_limit%2833554432%29"} {
		if !strings.Contains(d, want) {
			t.Errorf("DSN %q lacks %q", d, want)
		}
	}
}
