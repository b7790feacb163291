package store

import (
	"strconv"
	"strings"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"
)

// Dialect is the SQL dialect of an open store, by ent's name: the one
// place where the raw SQL written beside ent's builders differs between
// SQLite and PostgreSQL. Raw statements are written once, for SQLite, with
// `?` placeholders (or `?N` for the N-th argument), and portable SQL
// otherwise; Rebind makes them PostgreSQL's.
type Dialect string

// The dialects tuttid runs on.
const (
	SQLite   Dialect = dialect.SQLite
	Postgres Dialect = dialect.Postgres
)

// DialectOf is the dialect of an ent client's or transaction's driver
// (ent.Client.Dialect, ent.Tx.Dialect).
func DialectOf(name string) Dialect { return Dialect(name) }

// Rebind turns a statement's `?` and `?N` placeholders into PostgreSQL's
// `$n` (unchanged on SQLite). Placeholders inside quoted literals and
// identifiers are left alone.
func (d Dialect) Rebind(query string) string {
	if d != Postgres || !strings.Contains(query, "?") {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + len(query)/4)
	n := 0
	var quote byte // the quote character of the literal we are in, or 0
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '?':
			j := i + 1
			for j < len(query) && query[j] >= '0' && query[j] <= '9' {
				j++
			}
			b.WriteByte('$')
			if j > i+1 { // ?N names its argument
				b.WriteString(query[i+1 : j])
				i = j - 1
				continue
			}
			n++
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// ExprP is a predicate from a raw SQL fragment with `?` placeholders, one
// per argument, numbered for the query it joins on PostgreSQL (ent's
// sql.ExprP copies `?` as it is, which PostgreSQL refuses).
func ExprP(fragment string, args ...any) *sql.Predicate {
	return sql.P(func(b *sql.Builder) {
		parts := strings.Split(fragment, "?")
		if len(parts) != len(args)+1 {
			b.AddError(&placeholderError{fragment: fragment, want: len(parts) - 1, got: len(args)})
			return
		}
		for i, p := range parts {
			b.WriteString(p)
			if i < len(args) {
				b.Arg(args[i])
			}
		}
	})
}

type placeholderError struct {
	fragment  string
	want, got int
}

func (e *placeholderError) Error() string {
	return "store: " + strconv.Itoa(e.want) + " placeholders, " + strconv.Itoa(e.got) + " arguments in " + e.fragment
}

// Dialect is the store's SQL dialect.
func (s *Store) Dialect() Dialect { return Dialect(s.Client.Dialect()) }
