package sqlbatch

import (
	"reflect"
	"testing"
)

func TestPlaceholders(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n    int
		want string
	}{{0, "NULL"}, {1, "?"}, {3, "?,?,?"}} {
		if got := Placeholders(tc.n); got != tc.want {
			t.Errorf("Placeholders(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

func TestArgs(t *testing.T) {
	t.Parallel()
	if got, want := Args([]string{"a", "b"}), []any{"a", "b"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Args = %v, want %v", got, want)
	}
}
