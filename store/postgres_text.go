package store

import (
	"context"
	"database/sql/driver"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/stdlib"
)

// PostgreSQL's text refuses what SQLite's stores: a NUL character and
// bytes that are not UTF-8 (SQLSTATE 22021). A command's output can hold
// either, and one such item would fail its whole turn's storage; so on
// PostgreSQL every string argument has them replaced with U+FFFD, as Go's
// JSON decoder does with bytes that are not UTF-8. JSON columns are bytes
// (bytea) and keep everything.
const replacement = "\uFFFD"

// textSafe makes s storable in PostgreSQL's text.
func textSafe(s string) string {
	if strings.IndexByte(s, 0) < 0 && utf8.ValidString(s) {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, replacement), "\x00", replacement)
}

// textSafeConnector opens pgx connections whose string arguments are
// made textSafe.
type textSafeConnector struct{ driver.Connector }

func (c textSafeConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return textSafeConn{conn.(*stdlib.Conn)}, nil
}

// textSafeConn is pgx's connection (every interface of it, by embedding)
// with its argument check replaced.
type textSafeConn struct{ *stdlib.Conn }

// CheckNamedValue is asked by database/sql for every argument of every
// statement of the connection.
func (c textSafeConn) CheckNamedValue(nv *driver.NamedValue) error {
	switch v := nv.Value.(type) {
	case string:
		nv.Value = textSafe(v)
	case []string: // a text[] argument (the unnest inserts of a fork's history)
		nv.Value = textSafeAll(v)
	}
	return c.Conn.CheckNamedValue(nv)
}

// textSafeAll is textSafe of each string, copying the slice only when one
// changes.
func textSafeAll(ss []string) []string {
	out := ss
	copied := false
	for i, s := range ss {
		if safe := textSafe(s); safe != s {
			if !copied {
				out, copied = append([]string(nil), ss...), true
			}
			out[i] = safe
		}
	}
	return out
}
