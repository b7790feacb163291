package schema

import "entgo.io/ent/dialect"

// jsonBytes stores a JSON field as bytes on PostgreSQL, as SQLite stores
// ent's JSON (a BLOB): the exact bytes written come back (jsonb would
// reorder keys and drop spaces), octet_length reads the size without a
// cast, and the column has equality (json has none, and ent's DISTINCT
// queries need it).
func jsonBytes() map[string]string { return map[string]string{dialect.Postgres: "bytea"} }
