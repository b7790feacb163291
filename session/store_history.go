package session

import (
	"context"
	"fmt"
	"strings"
	"time"

	"tuttid/agent"
	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/ent/message"
	"tuttid/sqlbatch"
	"tuttid/store"
)

// InsertHistory appends msgs to a session's history in the caller's
// transaction, with the session's next versions in order (1..n for a new
// session: a fork child's history, page after page). It returns how many
// rows it stored.
//
// The rows go in as multi-row INSERTs without RETURNING, through the
// transaction's driver: ent's CreateBulk builds every row through
// sqlgraph and reads the ids back, which made it 1.3-1.6x a bare
// prepared-insert loop (issue 13); this is at most about 1.1x.
func InsertHistory(ctx context.Context, tx *ent.Tx, a *ent.AgentSession, msgs []agent.RuntimeMessage, now time.Time) (int, error) {
	if len(msgs) == 0 {
		return 0, nil
	}
	d := store.DialectOf(tx.Dialect())
	first, err := reserveVersions(ctx, tx, d, a.ID, int64(len(msgs)))
	if err != nil {
		return 0, err
	}
	if d == store.Postgres {
		return len(msgs), insertHistoryPostgres(ctx, tx, a, msgs, first, now)
	}
	args := make([]any, 0, min(len(msgs), sqlbatch.MaxRows)*len(messageColumns))
	for start := 0; start < len(msgs); start += sqlbatch.MaxRows {
		end := min(start+sqlbatch.MaxRows, len(msgs))
		args = args[:0]
		for i := start; i < end; i++ {
			args = appendMessageRow(args, a, msgs[i], first+int64(i), now)
		}
		if _, err := tx.ExecContext(ctx, insertMessagesSQL(d, end-start), args...); err != nil {
			return 0, err
		}
	}
	return len(msgs), nil
}

// insertMessagesUnnestSQL inserts any number of rows in one statement of
// fixed text: a column per array. On PostgreSQL a multi-row VALUES of n
// rows is a new statement for each n, parsed and planned again, with 12
// parameters a row (2.4 ms for 200 rows, more than the rest of a fork).
var insertMessagesUnnestSQL = fmt.Sprintf(`INSERT INTO %[1]s (%[2]s)
SELECT u.m, $1, $2, u.t, u.r, u.k, u.x, u.c, u.s, u.v, $3, $3
FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::bytea[], $10::text[], $11::bigint[]) AS u(m, t, r, k, x, c, s, v)`,
	message.Table, strings.Join(messageColumns, ", "))

// insertHistoryPostgres is InsertHistory's rows on PostgreSQL, as
// arrays.
func insertHistoryPostgres(ctx context.Context, tx *ent.Tx, a *ent.AgentSession, msgs []agent.RuntimeMessage, first int64, now time.Time) error {
	n := len(msgs)
	ids, turns, roles, kinds, texts, statuses := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	contents, versions := make([][]byte, n), make([]int64, n)
	for i, m := range msgs {
		m = withDefaults(m)
		ids[i], turns[i], roles[i], kinds[i], texts[i], statuses[i] = m.ID, m.TurnID, m.Role, m.Kind, m.Text, m.Status
		contents[i], versions[i] = m.Content, first+int64(i)
	}
	_, err := tx.ExecContext(ctx, insertMessagesUnnestSQL, a.ID, a.WorkspaceID, now, ids, turns, roles, kinds, texts, contents, statuses, versions)
	return err
}

// reserveVersionsSQL moves a session's version counter (and updated_at, as
// ent's update would) and returns it, in one statement.
var reserveVersionsSQL = fmt.Sprintf(`UPDATE %[1]s SET %[2]s = %[2]s + ?, %[3]s = ? WHERE %[4]s = ? RETURNING %[2]s`,
	agentsession.Table, agentsession.FieldLastMessageVersion, agentsession.FieldUpdatedAt, agentsession.FieldID)

// reserveVersions is nextVersions in one raw statement: for a short
// history, ent's update-then-select was a fifth of the insert's time.
func reserveVersions(ctx context.Context, tx *ent.Tx, d store.Dialect, sessionID string, n int64) (int64, error) {
	rows, err := tx.QueryContext(ctx, d.Rebind(reserveVersionsSQL), n, time.Now(), sessionID)
	if err != nil {
		return 0, fmt.Errorf("reserve message versions: %w", err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return 0, fmt.Errorf("reserve message versions: %w", err)
		}
		return 0, fmt.Errorf("reserve message versions: %w", &ent.NotFoundError{})
	}
	var last int64
	if err := rows.Scan(&last); err != nil {
		return 0, fmt.Errorf("reserve message versions: %w", err)
	}
	return last - n + 1, rows.Close()
}

// messageColumns are the columns InsertHistory fills, in its argument
// order; TestMessageColumnsMatchSchema keeps them in step with the schema.
var messageColumns = []string{
	message.FieldMessageID, message.FieldAgentSessionID, message.FieldWorkspaceID, message.FieldTurnID,
	message.FieldRole, message.FieldKind, message.FieldText, message.FieldContent, message.FieldStatus,
	message.FieldVersion, message.FieldCreatedAt, message.FieldUpdatedAt,
}

// fullInsertSQL is the statement for a full sqlbatch.MaxRows chunk, built
// once per dialect.
var fullInsertSQL = map[store.Dialect]string{
	store.SQLite:   buildInsertSQL(sqlbatch.MaxRows),
	store.Postgres: store.Postgres.Rebind(buildInsertSQL(sqlbatch.MaxRows)),
}

func insertMessagesSQL(d store.Dialect, rows int) string {
	if s, ok := fullInsertSQL[d]; ok && rows == sqlbatch.MaxRows {
		return s
	}
	return d.Rebind(buildInsertSQL(rows))
}

func buildInsertSQL(rows int) string {
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(messageColumns)), ", ") + ")"
	var b strings.Builder
	b.Grow(64 + rows*(len(row)+2))
	b.WriteString("INSERT INTO " + message.Table + " (" + strings.Join(messageColumns, ", ") + ") VALUES ")
	for i := 0; i < rows; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(row)
	}
	return b.String()
}

// appendMessageRow appends one row's values in messageColumns order, with
// the defaults createMessage applies.
func appendMessageRow(args []any, a *ent.AgentSession, m agent.RuntimeMessage, version int64, now time.Time) []any {
	m = withDefaults(m)
	return append(args, m.ID, a.ID, a.WorkspaceID, m.TurnID, m.Role, m.Kind, m.Text, []byte(m.Content), m.Status, version, now, now)
}
