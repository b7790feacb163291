package fork

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"tuttid/apperr"
	"tuttid/validate"
)

// splitForkTitle reads a generated title back into its base and number.
func splitForkTitle(t string) (base string, num int, ok bool) {
	rest, ok := strings.CutSuffix(t, ")")
	if !ok {
		return "", 0, false
	}
	i := len(rest)
	for i > 0 && rest[i-1] >= '0' && rest[i-1] <= '9' {
		i--
	}
	digits := rest[i:]
	base, ok = strings.CutSuffix(rest[:i], "(fork")
	if !ok || digits == "" || digits[0] == '0' {
		return "", 0, false
	}
	num, err := strconv.Atoi(digits)
	return base, num, err == nil
}

// FuzzTitle checks the title rule: an explicit title is refused only with
// invalid_input, and kept trimmed, valid and bounded (empty: generated);
// a generated title reads back to its base and number, so two bases or two
// numbers never give one title.
func FuzzTitle(f *testing.F) {
	f.Add("Build login", "Build login", 1)
	f.Add("  padded  ", "Build login(fork1)", 2)
	f.Add("", "x(fork", 10)
	f.Add("   ", "(fork1)", 1)
	f.Add("\xff", "a(fork1", 12)
	f.Add(strings.Repeat("é", 300), "9", 99999)
	f.Fuzz(func(t *testing.T, explicit, base string, num int) {
		got, err := explicitTitle(&explicit)
		switch {
		case err != nil:
			if apperr.CodeOf(err) != apperr.InvalidInput {
				t.Fatalf("explicit %q refused with %v", explicit, err)
			}
		case got == nil:
			if strings.TrimSpace(explicit) != "" {
				t.Fatalf("explicit %q dropped", explicit)
			}
		default:
			if *got != strings.TrimSpace(explicit) || *got == "" || !utf8.ValidString(*got) || len(*got) > validate.MaxTitleLen {
				t.Fatalf("explicit %q kept as %q", explicit, *got)
			}
		}

		if num < 1 {
			return
		}
		title := forkTitle(base, num)
		b, n, ok := splitForkTitle(title)
		if !ok || b != base || n != num {
			t.Fatalf("forkTitle(%q, %d) = %q reads back as %q, %d, %v", base, num, title, b, n, ok)
		}
		if utf8.ValidString(base) && !utf8.ValidString(title) {
			t.Fatalf("forkTitle(%q, %d) = %q is not UTF-8", base, num, title)
		}
	})
}
