package fork

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"tuttid/agent"
	"tuttid/ent"
	"tuttid/ent/message"
	"tuttid/ent/turn"
	"tuttid/session"
	"tuttid/sqlbatch"
	"tuttid/store"
)

// messageSource is the forkMessageSource a fork records: where its
// history comes from once the provider's stream is spooled (or was not).
func messageSource(rf agent.RuntimeForkResult) string {
	switch {
	case rf.EmptyParent:
		return SourceEmptyParent
	case rf.History != nil:
		return SourceProviderTurns
	}
	return SourceParentCache
}

// historyBytesSQL sums the sizes of a session's cached items: SQLite reads
// a BLOB's length from its record header, without its content
// (PostgreSQL's length of bytea is its bytes too).
var historyBytesSQL = fmt.Sprintf(`SELECT COALESCE(SUM(LENGTH(%s)), 0) FROM %s WHERE %s = ?`,
	message.FieldContent, message.Table, message.FieldAgentSessionID)

// historyBytes is about the size of the parent's history as the provider
// will send it (its items), for the runtime to size its first read; 0
// when it cannot be read.
func (s *Service) historyBytes(ctx context.Context, sessionID string) int64 {
	var n int64
	if err := s.store.DB.QueryRowContext(ctx, s.store.Dialect().Rebind(historyBytesSQL), sessionID).Scan(&n); err != nil {
		s.log.WarnContext(ctx, "fork: the parent's history size could not be read", "session", sessionID, "err", err)
		return 0
	}
	return n
}

// writeHistory stores the child's history in the child's transaction:
// the spooled provider pages, or (the provider sent no stream, or its
// stream failed while spooling) the parent's cached history. An empty
// parent has none. A failure here, of the spool file or of the database,
// fails the transaction.
func writeHistory(ctx context.Context, tx *ent.Tx, child *ent.AgentSession, p persistInput, now time.Time) error {
	switch {
	case p.rf.EmptyParent:
		return nil
	case p.rf.History != nil:
		return storeHistory(ctx, tx, child, p.rf.History, now)
	}
	return copyParentHistory(ctx, tx, p.parent.ID, child, p.in.LastTurnID, now)
}

// storeHistory stores the spooled pages, gathered into batches of up to
// historyBatchRows messages or historyBatchBytes of text: the provider's
// pages are as small as one turn, and a statement per page costs a round
// trip each on PostgreSQL (three per turn made a 100-turn fork 2x its
// time on SQLite). Versions run 1..n across batches.
func storeHistory(ctx context.Context, tx *ent.Tx, child *ent.AgentSession, h agent.HistoryStream, now time.Time) error {
	stored := 0 // turns so far: their index orders their start times
	var turns []agent.RuntimeTurn
	var msgs []agent.RuntimeMessage
	size := 0
	flush := func() error {
		if len(turns) == 0 {
			return nil
		}
		if err := insertTurns(ctx, tx, child, turns, stored, now); err != nil {
			return err
		}
		if _, err := session.InsertHistory(ctx, tx, child, msgs, now); err != nil {
			return err
		}
		stored += len(turns)
		turns, msgs, size = turns[:0], msgs[:0], 0
		return nil
	}
	for {
		page, err := h.Next(ctx)
		if errors.Is(err, io.EOF) {
			return flush()
		}
		if err != nil {
			return err
		}
		for _, t := range page {
			turns = append(turns, t)
			for _, m := range t.Messages {
				if m.TurnID == "" {
					m.TurnID = t.ID
				}
				msgs = append(msgs, m)
				size += len(m.Text) + len(m.Content)
			}
			if len(msgs) >= historyBatchRows || size >= historyBatchBytes {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	}
}

// A batch of the child's history: enough rows that a statement's round
// trip is small beside its work, few enough bytes that memory holds a
// batch and not the history.
const (
	historyBatchRows  = sqlbatch.MaxRows
	historyBatchBytes = 4 << 20
)

// orderedTurns is how many stored turns get distinct start times before
// now, a microsecond apart, so the child's turns keep the provider's order
// (ties, past it, keep it by row id).
const orderedTurns = 1_000_000

func insertTurns(ctx context.Context, tx *ent.Tx, child *ent.AgentSession, turns []agent.RuntimeTurn, offset int, now time.Time) error {
	if store.DialectOf(tx.Dialect()) == store.Postgres {
		return insertTurnsPostgres(ctx, tx, child, turns, offset, now)
	}
	for start := 0; start < len(turns); start += sqlbatch.MaxRows {
		end := min(start+sqlbatch.MaxRows, len(turns))
		builders := make([]*ent.TurnCreate, 0, end-start)
		for i := start; i < end; i++ {
			t := turns[i]
			at := turnStartedAt(now, offset+i)
			builders = append(builders, tx.Turn.Create().SetTurnID(t.ID).SetAgentSessionID(child.ID).
				SetStatus(childTurnStatus(t.Status)).SetError(t.Error).SetErrorCode(t.ErrorCode).SetStartedAt(at).SetCompletedAt(at))
		}
		if err := tx.Turn.CreateBulk(builders...).Exec(ctx); err != nil {
			return err
		}
	}
	return nil
}

// insertTurnsUnnestSQL is insertTurns' statement on PostgreSQL: one of
// fixed text for any number of rows, as session.InsertHistory's.
var insertTurnsUnnestSQL = fmt.Sprintf(`INSERT INTO %[1]s (%[2]s, %[3]s, %[4]s, %[5]s, %[6]s, %[7]s, %[8]s, %[9]s, %[10]s)
SELECT u.i, $1, u.s, u.e, u.c, u.a, u.a, '', '' FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[]) AS u(i, s, e, c, a)`,
	turn.Table, turn.FieldTurnID, turn.FieldAgentSessionID, turn.FieldStatus, turn.FieldError, turn.FieldErrorCode,
	turn.FieldStartedAt, turn.FieldCompletedAt, turn.FieldCheckpointCommit, turn.FieldCheckpointHead)

func insertTurnsPostgres(ctx context.Context, tx *ent.Tx, child *ent.AgentSession, turns []agent.RuntimeTurn, offset int, now time.Time) error {
	n := len(turns)
	ids, statuses, errs, codes, at := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]time.Time, n)
	for i, t := range turns {
		ids[i], statuses[i], errs[i], codes[i] = t.ID, string(childTurnStatus(t.Status)), t.Error, t.ErrorCode
		at[i] = turnStartedAt(now, offset+i)
	}
	_, err := tx.ExecContext(ctx, insertTurnsUnnestSQL, child.ID, ids, statuses, errs, codes, at)
	return err
}

// turnStartedAt is the start (and end) time of the child's i-th turn.
func turnStartedAt(now time.Time, i int) time.Time {
	return now.Add(time.Duration(min(i, orderedTurns-1)-orderedTurns) * time.Microsecond)
}

// copyParentTurnsSQL copies the design's fallback turns: the parent's
// completed turns (in their order, with their times), all of them or
// through lastTurnID inclusive. Args: parent, lastTurnID, child.
var copyParentTurnsSQL = fmt.Sprintf(`WITH ordered AS (
	SELECT %[2]s, %[4]s, %[5]s, %[6]s, ROW_NUMBER() OVER (ORDER BY %[5]s, %[7]s) AS rn
	FROM %[1]s WHERE %[3]s = ?1
), bound AS (SELECT MIN(rn) AS rn FROM ordered WHERE %[2]s = ?2)
INSERT INTO %[1]s (%[2]s, %[3]s, %[4]s, %[8]s, %[5]s, %[6]s)
SELECT %[2]s, ?3, %[4]s, '', %[5]s, %[6]s FROM ordered
WHERE %[4]s = '%[9]s' AND rn <= COALESCE((SELECT rn FROM bound), 9223372036854775807)
ORDER BY rn`,
	turn.Table, turn.FieldTurnID, turn.FieldAgentSessionID, turn.FieldStatus, turn.FieldStartedAt,
	turn.FieldCompletedAt, turn.FieldID, turn.FieldError, turn.StatusCOMPLETED)

// copyParentMessagesSQL copies the parent's messages of the child's turns
// (those just copied), but no in-progress one, with versions 1..n in the
// parent's order. Args: parent, child, workspace, now. PostgreSQL types a
// parameter in a SELECT list as text (and refuses ?2 as text there and
// varchar in the WHERE), so there the SELECT list's are cast.
func copyParentMessagesSQL(d store.Dialect) string {
	child, ws, now := "?2", "?3", "?4"
	if d == store.Postgres {
		child, ws, now = "CAST(?2 AS VARCHAR)", "CAST(?3 AS VARCHAR)", "CAST(?4 AS TIMESTAMP WITH TIME ZONE)"
	}
	return d.Rebind(fmt.Sprintf(copyParentMessagesFormat, child, ws, now))
}

var copyParentMessagesFormat = fmt.Sprintf(`INSERT INTO %[1]s
	(%[2]s, %[3]s, %[4]s, %[5]s, %[6]s, %[7]s, %[8]s, %[9]s, %[10]s, %[11]s, %[12]s, %[13]s)
SELECT m.%[2]s, %%[1]s, %%[2]s, m.%[5]s, m.%[6]s, m.%[7]s, m.%[8]s, m.%[9]s, m.%[10]s,
	ROW_NUMBER() OVER (ORDER BY m.%[11]s), %%[3]s, %%[3]s
FROM %[1]s AS m
WHERE m.%[3]s = ?1 AND m.%[10]s <> '%[17]s'
	AND m.%[5]s IN (SELECT %[15]s FROM %[14]s WHERE %[16]s = ?2)
ORDER BY m.%[11]s`,
	message.Table, message.FieldMessageID, message.FieldAgentSessionID, message.FieldWorkspaceID,
	message.FieldTurnID, message.FieldRole, message.FieldKind, message.FieldText, message.FieldContent,
	message.FieldStatus, message.FieldVersion, message.FieldCreatedAt, message.FieldUpdatedAt,
	turn.Table, turn.FieldTurnID, turn.FieldAgentSessionID, agent.ItemInProgress)

// copyParentHistory applies the design's fallback rules in SQL, so that no
// history passes through memory: only completed persisted turns, all of
// them or through lastTurnID inclusive, and no in-progress messages.
func copyParentHistory(ctx context.Context, tx *ent.Tx, parentID string, child *ent.AgentSession, lastTurnID string, now time.Time) error {
	d := store.DialectOf(tx.Dialect())
	if _, err := tx.ExecContext(ctx, d.Rebind(copyParentTurnsSQL), parentID, lastTurnID, child.ID); err != nil {
		return fmt.Errorf("copy the parent's turns: %w", err)
	}
	res, err := tx.ExecContext(ctx, copyParentMessagesSQL(d), parentID, child.ID, child.WorkspaceID, now)
	if err != nil {
		return fmt.Errorf("copy the parent's messages: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil || n == 0 {
		return err
	}
	// The child is new: its versions are 1..n.
	return tx.AgentSession.UpdateOneID(child.ID).AddLastMessageVersion(n).Exec(ctx)
}
