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
		{"line", Line("t", "Fork 2 — héllo", 50), true},
		{"line with ESC", Line("t", "a\x1b[2Jb", 50), false},
		{"line with NUL", Line("t", "a\x00b", 50), false},
		{"line with newline", Line("t", "a\nb", 50), false},
		{"line with DEL", Line("t", "a\x7fb", 50), false},
		{"line with C1", Line("t", "a\u009bb", 50), false},
		{"line with a bidi override", Line("t", "a\u202eb", 50), false},
		{"line with an isolate", Line("t", "a\u2066b", 50), false},
		{"long line", Line("t", "abc", 2), false},
		{"message", Message("m", "line 1\n\tline 2\r\n", 50), true},
		{"message with ESC", Message("m", "a\x1b]0;x\x07", 50), false},
		{"message with NUL", Message("m", "a\x00", 50), false},
		{"message with a bidi override", Message("m", "a\u202e", 50), false},
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
