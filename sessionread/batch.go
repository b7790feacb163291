package sessionread

import (
	"context"

	entsql "entgo.io/ent/dialect/sql"

	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/ent/message"
	"tuttid/paging"
	"tuttid/sqlbatch"
	"tuttid/store"
)

// Reads of many sessions at once, for readAhead; each is one or two queries
// whatever the number of sessions (at most a page, paging.MaxPage).

// firstUserTexts returns, by session id, the text of each session's first
// user message with text (what DisplayTitle falls back to).
func (s *Reader) firstUserTexts(ctx context.Context, sessionIDs []string) (map[string]string, error) {
	first := "SELECT agent_session_id, MIN(version) FROM " + message.Table +
		" WHERE role = 'user' AND text <> '' AND agent_session_id IN (" + sqlbatch.Placeholders(len(sessionIDs)) + ")" +
		" GROUP BY agent_session_id"
	msgs, err := s.store.Client.Message.Query().
		Where(message.AgentSessionIDIn(sessionIDs...), rowIn(first, sqlbatch.Args(sessionIDs)...)).
		Select(message.FieldAgentSessionID, message.FieldText).All(ctx)
	if err != nil {
		return nil, apperr.Storage(err, "read the sessions' first messages")
	}
	out := make(map[string]string, len(msgs))
	for _, m := range msgs {
		out[m.AgentSessionID] = m.Text
	}
	return out, nil
}

// messagePages returns, by session id, the same page of each session's
// messages: the first or last w.Limit, without cursors.
func (s *Reader) messagePages(ctx context.Context, sessionIDs []string, w paging.Window) (map[string]paging.Page[*ent.Message], error) {
	var counts []struct {
		AgentSessionID string `json:"agent_session_id"`
		Count          int    `json:"count"`
	}
	err := s.store.Client.Message.Query().Where(message.AgentSessionIDIn(sessionIDs...)).
		GroupBy(message.FieldAgentSessionID).Aggregate(ent.Count()).Scan(ctx, &counts)
	if err != nil {
		return nil, apperr.Storage(err, "count messages")
	}
	dir := "ASC"
	if w.Backward {
		dir = "DESC"
	}
	// Each session's first w.Limit rows that fit in MaxPageBytes (the first
	// one whatever its size); sizes come from octet_length, which reads no
	// text. Without cursors, the count says whether there are more.
	ranked := "SELECT agent_session_id, version FROM (SELECT agent_session_id, version, " +
		"ROW_NUMBER() OVER w AS n, SUM(" + sizeExpr + ") OVER w AS bytes FROM " + message.Table +
		" WHERE agent_session_id IN (" + sqlbatch.Placeholders(len(sessionIDs)) + ")" +
		" WINDOW w AS (PARTITION BY agent_session_id ORDER BY version " + dir + ")) AS ranked WHERE n <= ? AND (n = 1 OR bytes <= ?)"
	args := append(sqlbatch.Args(sessionIDs), w.Limit, MaxPageBytes)
	order := ent.Asc(message.FieldVersion)
	if w.Backward {
		order = ent.Desc(message.FieldVersion)
	}
	rows, err := s.store.Client.Message.Query().
		Where(message.AgentSessionIDIn(sessionIDs...), rowIn(ranked, args...)).
		Order(ent.Asc(message.FieldAgentSessionID), order).All(ctx)
	if err != nil {
		return nil, apperr.Storage(err, "read messages")
	}
	bySession := map[string][]*ent.Message{}
	for _, m := range rows {
		bySession[m.AgentSessionID] = append(bySession[m.AgentSessionID], m)
	}
	total := map[string]int{}
	for _, c := range counts {
		total[c.AgentSessionID] = c.Count
	}
	out := make(map[string]paging.Page[*ent.Message], len(sessionIDs))
	for _, id := range sessionIDs {
		rows := bySession[id]
		out[id] = paging.PageOf(rows, w, total[id] > len(rows), total[id], func(m *ent.Message) string { return paging.Cursor("m", m.Version) })
	}
	return out, nil
}

// turnsMessages returns, by provider turn id, the messages of a session's
// turns in version order, in one query.
func (s *Reader) turnsMessages(ctx context.Context, sessionID string, turnIDs []string) (map[string][]*ent.Message, error) {
	q := s.store.Client.Message.Query().Where(message.AgentSessionID(sessionID))
	if len(turnIDs) <= paging.MaxPage {
		q.Where(message.TurnIDIn(turnIDs...))
	} // else a longer list (a comparison of long sessions): the whole session
	msgs, err := q.Order(ent.Asc(message.FieldVersion)).All(ctx)
	if err != nil {
		return nil, apperr.Storage(err, "read the turns' messages")
	}
	byTurn := map[string][]*ent.Message{}
	for _, m := range msgs {
		byTurn[m.TurnID] = append(byTurn[m.TurnID], m)
	}
	return byTurn, nil
}

// rowIn is "(agent_session_id, version) IN (subquery)".
func rowIn(subquery string, args ...any) func(*entsql.Selector) {
	return func(sel *entsql.Selector) {
		sel.Where(store.ExprP("("+sel.C(message.FieldAgentSessionID)+", "+sel.C(message.FieldVersion)+") IN ("+subquery+")", args...))
	}
}
