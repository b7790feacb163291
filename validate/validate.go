// Package validate checks what a client sends before it reaches the
// store: ids, text and paths, with the size limits that keep one request
// from filling the database.
package validate

import (
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"tuttid/apperr"
)

// Size limits on what a client sends.
const (
	MaxNameLen    = 200
	MaxTitleLen   = 500
	MaxPathLen    = 4096
	MaxIDLen      = 128
	MaxMessageLen = 256 << 10
	MaxModelLen   = 200
)

// ID rejects an id that is empty, too long or not printable ASCII.
func ID(what, id string) error {
	if id == "" {
		return apperr.New(apperr.InvalidInput, "%s is required", what)
	}
	if len(id) > MaxIDLen {
		return apperr.New(apperr.InvalidInput, "%s is longer than %d characters", what, MaxIDLen)
	}
	for _, r := range id {
		if r <= ' ' || r > '~' {
			return apperr.New(apperr.InvalidInput, "%s may only hold printable ASCII characters without spaces", what)
		}
	}
	return nil
}

// Text rejects text that is not UTF-8 or longer than max bytes.
func Text(what, s string, max int) error {
	if !utf8.ValidString(s) {
		return apperr.New(apperr.InvalidInput, "%s is not valid UTF-8", what)
	}
	if len(s) > max {
		return apperr.New(apperr.InvalidInput, "%s is longer than %d bytes", what, max)
	}
	return nil
}

// Line rejects what Text rejects, and any control character (C0, DEL, C1)
// or bidirectional override: a name or a title is one line, printed by
// `tuttid tree` and shown in the GUI, where such characters could forge
// what a person sees.
func Line(what, s string, max int) error {
	if err := Text(what, s, max); err != nil {
		return err
	}
	if r, ok := firstControl(s, ""); ok {
		return apperr.New(apperr.InvalidInput, "%s may not hold control characters (found %U)", what, r)
	}
	return nil
}

// Message rejects what Text rejects, and control characters other than
// newline, carriage return and tab.
func Message(what, s string, max int) error {
	if err := Text(what, s, max); err != nil {
		return err
	}
	if r, ok := firstControl(s, "\n\r\t"); ok {
		return apperr.New(apperr.InvalidInput, "%s may not hold control characters other than newline and tab (found %U)", what, r)
	}
	return nil
}

// firstControl finds the first control character (C0, DEL, C1) or
// bidirectional override of s that allowed does not hold.
func firstControl(s, allowed string) (rune, bool) {
	for _, r := range s {
		if (unicode.IsControl(r) || isBidiControl(r)) && !strings.ContainsRune(allowed, r) {
			return r, true
		}
	}
	return 0, false
}

// isBidiControl reports the embedding, override and isolate characters
// (U+202A..U+202E, U+2066..U+2069).
func isBidiControl(r rune) bool {
	return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
}

// Path rejects a path that is not absolute.
func Path(what, p string) error {
	if err := Text(what, p, MaxPathLen); err != nil {
		return err
	}
	if !filepath.IsAbs(p) {
		return apperr.New(apperr.InvalidInput, "%s must be an absolute path, got %q", what, p)
	}
	return nil
}
