package sessionread

import (
	"context"
	"strings"

	"tuttid/apperr"
	"tuttid/ent/message"
	"tuttid/paging"
)

// MaxPageBytes bounds the text and content of the messages one page of
// Messages carries; a page holds at least one message whatever its size.
// Without it a page of 50 messages of a session with 5 MB replies is
// 250 MB to read, hold and encode at once. A page cut short by it says so
// as any page with more after it does (hasNextPage forward,
// hasPreviousPage backward), so clients page on as usual.
const MaxPageBytes = 8 << 20

// sizeExpr is a message row's size in SQL: its text and content bytes.
// octet_length of a column is answered from the record header, so sizing
// reads no text. (PostgreSQL has octet_length for text and bytea, and
// COALESCE, not ifnull.)
const sizeExpr = "octet_length(" + message.FieldText + ") + COALESCE(octet_length(" + message.FieldContent + "), 0)"

// pageFit is the part of a window that fits in MaxPageBytes: the rows with
// versions lo..hi (n of them, none when n is 0), and whether the window
// has rows beyond them.
type pageFit struct {
	n      int
	lo, hi int64
	more   bool
}

// fitMessages sizes window w of a session's messages before they are
// read (sizeExpr reads no text).
func (s *Reader) fitMessages(ctx context.Context, sessionID string, w paging.Window) (pageFit, error) {
	var q strings.Builder
	q.WriteString("SELECT " + message.FieldVersion + ", " + sizeExpr + " FROM " + message.Table +
		" WHERE " + message.FieldAgentSessionID + " = ?")
	args := []any{sessionID}
	if w.After != nil {
		q.WriteString(" AND " + message.FieldVersion + " > ?")
		args = append(args, *w.After)
	}
	if w.Before != nil {
		q.WriteString(" AND " + message.FieldVersion + " < ?")
		args = append(args, *w.Before)
	}
	dir := " ASC"
	if w.Backward {
		dir = " DESC"
	}
	q.WriteString(" ORDER BY " + message.FieldVersion + dir + " LIMIT ?")
	args = append(args, w.Limit+1) // one more, to learn whether there are more

	rows, err := s.store.DB.QueryContext(ctx, s.store.Dialect().Rebind(q.String()), args...)
	if err != nil {
		return pageFit{}, apperr.Storage(err, "size messages")
	}
	defer rows.Close()
	var fit pageFit
	var total int64
	for rows.Next() {
		var version, size int64
		if err := rows.Scan(&version, &size); err != nil {
			return pageFit{}, apperr.Storage(err, "size messages")
		}
		if fit.n == w.Limit || (fit.n > 0 && total+size > MaxPageBytes) {
			fit.more = true
			break
		}
		total += size
		fit.n++
		if fit.n == 1 {
			fit.lo, fit.hi = version, version
		}
		fit.lo, fit.hi = min(fit.lo, version), max(fit.hi, version)
	}
	if err := rows.Err(); err != nil {
		return pageFit{}, apperr.Storage(err, "size messages")
	}
	return fit, nil
}
