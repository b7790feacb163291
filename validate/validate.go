// Package validate checks what a client sends before it reaches the
// store: ids, text and paths, with the size limits that keep one request
// from filling the database.
package validate

import (
	"path/filepath"
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
