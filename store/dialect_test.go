package store_test

import (
	"testing"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"

	"tuttid/store"
)

func TestRebind(t *testing.T) {
	for _, c := range []struct{ name, in, pg string }{
		{"none", "SELECT 1", "SELECT 1"},
		{"in order", "UPDATE t SET a = a + ?, b = ? WHERE c = ?", "UPDATE t SET a = a + $1, b = $2 WHERE c = $3"},
		{"numbered", "SELECT ?2, ?1 WHERE x = ?2", "SELECT $2, $1 WHERE x = $2"},
		{"many", "VALUES (?, ?), (?, ?), (?, ?), (?, ?), (?, ?), (?)", "VALUES ($1, $2), ($3, $4), ($5, $6), ($7, $8), ($9, $10), ($11)"},
		{"quoted", `SELECT '?', "a?b", ? FROM t WHERE s = 'it''s?'`, `SELECT '?', "a?b", $1 FROM t WHERE s = 'it''s?'`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := store.SQLite.Rebind(c.in); got != c.in {
				t.Errorf("SQLite: %q, want it unchanged", got)
			}
			if got := store.Postgres.Rebind(c.in); got != c.pg {
				t.Errorf("PostgreSQL: %q, want %q", got, c.pg)
			}
		})
	}
}

// TestExprP: a raw fragment's placeholders are numbered after the ones
// of the query it joins on PostgreSQL (ent's sql.ExprP leaves `?`).
func TestExprP(t *testing.T) {
	for _, c := range []struct{ dialect, want string }{
		{dialect.SQLite, "SELECT * FROM `t` WHERE `a` = ? AND b IN (SELECT ? UNION SELECT ?)"},
		{dialect.Postgres, `SELECT * FROM "t" WHERE "a" = $1 AND b IN (SELECT $2 UNION SELECT $3)`},
	} {
		q, args := sql.Dialect(c.dialect).Select().From(sql.Table("t")).
			Where(sql.And(sql.EQ("a", 1), store.ExprP("b IN (SELECT ? UNION SELECT ?)", 2, 3))).Query()
		if q != c.want || len(args) != 3 || args[2] != 3 {
			t.Errorf("%s: %s %v, want %s [1 2 3]", c.dialect, q, args, c.want)
		}
	}
	s := sql.Dialect(dialect.Postgres).Select().From(sql.Table("t")).Where(store.ExprP("a = ? AND b = ?", 1))
	if _, _ = s.Query(); s.Err() == nil {
		t.Error("two placeholders, one argument: no error")
	}
}

func TestIsPostgresURL(t *testing.T) {
	for in, want := range map[string]bool{
		"postgres://u@h/db":                true,
		"postgresql://u@h:5432/db?x=y":     true,
		"/home/me/.local/share/tuttid.db":  false,
		"file:tuttid.db":                   false,
		"postgres.db":                      false,
		"./postgres://not-a-url-but-a-dir": false,
	} {
		if got := store.IsPostgresURL(in); got != want {
			t.Errorf("IsPostgresURL(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"/home/me/tuttid.db":                         "/home/me/tuttid.db",
		"postgres://tuttid:s3cret@db.example:5432/t": "postgres://tuttid:xxxxx@db.example:5432/t",
		"postgresql://tuttid@/t?host=/run/pg":        "postgresql://tuttid@/t?host=/run/pg",
		"postgres://h/t?user=tuttid&password=s3cret": "postgres://h/t?password=xxxxx&user=tuttid",
		"postgres://tuttid:s3cret@[::1/t":            "postgres://(a URL that does not parse)",
	} {
		if got := store.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}
