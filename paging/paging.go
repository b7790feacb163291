// Package paging validates Relay connection arguments and encodes the
// opaque cursors tuttid hands out.
package paging

import (
	"encoding/base64"
	"slices"
	"strconv"
	"strings"

	"tuttid/apperr"
)

// MaxPage bounds one page so that a request cannot load a whole table.
const MaxPage = 500

// DefaultPage is the page size when neither first nor last is given.
const DefaultPage = 50

// Args are the Relay arguments of one connection field.
type Args struct {
	First, Last   *int
	After, Before *string
	// SkipTotal says the caller does not use the total count: counting a
	// long list's rows is what would make a deep page cost more than a
	// shallow one.
	SkipTotal bool
}

// Window is Args checked and decoded: keys are exclusive bounds.
type Window struct {
	// Limit rows, taken from the start (Backward false) or end.
	Limit    int
	Backward bool
	After    *int64
	Before   *int64
	// AfterID and BeforeID break ties between rows with equal keys, for
	// cursors made by KeyedCursor.
	AfterID, BeforeID string
}

// Check validates args for a connection whose cursors carry int64 keys
// under the given kind ("m" for message versions, ...).
func (a Args) Check(kind string) (Window, error) {
	w := Window{Limit: DefaultPage}
	if a.First != nil && a.Last != nil {
		return w, apperr.New(apperr.InvalidInput, "pass first or last, not both")
	}
	for name, v := range map[string]*int{"first": a.First, "last": a.Last} {
		if v != nil && (*v < 0 || *v > MaxPage) {
			return w, apperr.New(apperr.InvalidInput, "%s must be between 0 and %d", name, MaxPage)
		}
	}
	switch {
	case a.First != nil:
		w.Limit = *a.First
	case a.Last != nil:
		w.Limit, w.Backward = *a.Last, true
	}
	var err error
	if a.After != nil {
		if w.After, w.AfterID, err = decode(kind, *a.After); err != nil {
			return w, err
		}
	}
	if a.Before != nil {
		if w.Before, w.BeforeID, err = decode(kind, *a.Before); err != nil {
			return w, err
		}
	}
	return w, nil
}

// Cursor encodes key as an opaque cursor of the given kind.
func Cursor(kind string, key int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(kind + ":" + strconv.FormatInt(key, 10)))
}

// KeyedCursor encodes key and a tie-breaking id as an opaque cursor.
func KeyedCursor(kind string, key int64, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(kind + ":" + strconv.FormatInt(key, 10) + ":" + id))
}

func decode(kind, cursor string) (*int64, string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err == nil {
		if k, rest, ok := strings.Cut(string(raw), ":"); ok && k == kind {
			v, id, _ := strings.Cut(rest, ":")
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				return &n, id, nil
			}
		}
	}
	return nil, "", apperr.New(apperr.InvalidInput, "cursor %q is not a cursor of this list", cursor)
}

// Page is one page of a connection.
type Page[T any] struct {
	Nodes           []T
	Cursors         []string
	HasNextPage     bool
	HasPreviousPage bool
	TotalCount      int
}

// NewPage trims the one extra row fetched to learn whether there are
// more, puts the rows in list order and sets the Relay flags.
func NewPage[T any](rows []T, w Window, total int, cursor func(T) string) Page[T] {
	more := len(rows) > w.Limit
	if more {
		rows = rows[:w.Limit]
	}
	return PageOf(rows, w, more, total, cursor)
}

// PageOf makes the page of rows (in window order) when more says whether
// the window has rows beyond them.
func PageOf[T any](rows []T, w Window, more bool, total int, cursor func(T) string) Page[T] {
	if w.Backward {
		slices.Reverse(rows)
	}
	p := Page[T]{Nodes: rows, TotalCount: total}
	for _, r := range rows {
		p.Cursors = append(p.Cursors, cursor(r))
	}
	// Relay: the flag away from the direction of travel says whether a
	// cursor bound was given, which is what clients use it for.
	if w.Backward {
		p.HasPreviousPage, p.HasNextPage = more, w.Before != nil
	} else {
		p.HasNextPage, p.HasPreviousPage = more, w.After != nil
	}
	return p
}
