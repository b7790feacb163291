// Package sqlbatch holds what the hand-written SQL statements that bind
// many values share: the bound on one INSERT's rows and IN-list helpers.
package sqlbatch

// MaxRows bounds the rows of one INSERT: SQLite allows 32766 bound
// parameters a statement, and the widest row (a message) binds 12.
const MaxRows = 500

// Placeholders is n comma-separated "?" for an IN list; "NULL" when n is
// 0, so that "x IN (NULL)" matches nothing instead of being a syntax error.
func Placeholders(n int) string {
	if n == 0 {
		return "NULL"
	}
	b := make([]byte, 0, 2*n)
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '?')
	}
	return string(b)
}

// Args converts strings to the []any a statement binds.
func Args(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
