package validate

import (
	"errors"
	"strings"
	"testing"

	"tuttid/apperr"
)

func TestChecks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  error
		ok   bool
	}{
		{"id", ID("id", "abc-1"), true},
		{"empty id", ID("id", ""), false},
		{"id with space", ID("id", "a b"), false},
		{"long id", ID("id", strings.Repeat("x", MaxIDLen+1)), false},
		{"text", Text("t", "héllo", 10), true},
		{"invalid utf-8", Text("t", "\xff", 10), false},
		{"long text", Text("t", "abc", 2), false},
		{"absolute path", Path("p", "/tmp"), true},
		{"relative path", Path("p", "tmp"), false},
	} {
		var ae *apperr.Error
		switch {
		case tc.ok && tc.err != nil:
			t.Errorf("%s: %v, want nil", tc.name, tc.err)
		case !tc.ok && (!errors.As(tc.err, &ae) || ae.Code != apperr.InvalidInput):
			t.Errorf("%s: %v, want %s", tc.name, tc.err, apperr.InvalidInput)
		}
	}
}
