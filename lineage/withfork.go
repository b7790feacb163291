package lineage

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"entgo.io/ent/dialect/sql"

	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/ent/predicate"
	"tuttid/ent/sessionfork"
)

// forkColumns are the lineage row's columns read beside each session, as
// one text column (forkText, the columns joined by forkSep), so that a walk
// reads sessions and lineage in one query: the recursive CTE runs once.
// One column, not nine, and text, not JSON: ent looks up the scan type of
// each column it does not know on every row, and decoding JSON cost more
// than the second query saved. fork_request_id, the one value a client
// chooses, comes last, so that a separator in it cannot shift the others.
var forkColumns = []string{
	sessionfork.FieldID, sessionfork.FieldForkedAtUnixMs, sessionfork.FieldParentAgentSessionID,
	sessionfork.FieldChildProviderSessionID, sessionfork.FieldParentProviderSessionID,
	sessionfork.FieldProvider, sessionfork.FieldForkTurnID,
	sessionfork.FieldForkRequestFingerprint, sessionfork.FieldForkRequestID,
}

const (
	forkText = "lineage_fork"
	forkSep  = "\x1f" // the ASCII unit separator
)

// sessionsWithForks returns a workspace's sessions matching where, each
// with the lineage row where it is the child (absent for a root), in one
// query.
func sessionsWithForks(ctx context.Context, c *ent.Client, workspaceID string, where ...predicate.AgentSession) ([]*ent.AgentSession, []*ent.SessionFork, error) {
	// The workspace test is written +column so that SQLite looks each
	// session up by its id from the walk instead of scanning every session
	// of the workspace (ten times the rows for a chain of 1,000 in a
	// workspace of 10,000).
	inWorkspace := func(s *sql.Selector) {
		s.Where(sql.ExprP("+"+s.C(agentsession.FieldWorkspaceID)+" = ?", workspaceID))
	}
	q := c.AgentSession.Query().Where(append(where, inWorkspace)...)
	q.Modify(func(s *sql.Selector) {
		f := sql.Table(sessionfork.Table).As("f")
		s.LeftJoin(f).OnP(sql.And(
			sql.ColumnsEQ(f.C(sessionfork.FieldChildAgentSessionID), s.C(agentsession.FieldID)),
			sql.EQ(f.C(sessionfork.FieldWorkspaceID), workspaceID)))
		// COALESCE: a root has no lineage row; ent cannot type a NULL.
		cols := make([]string, len(forkColumns))
		for i, col := range forkColumns {
			cols[i] = f.C(col)
		}
		s.AppendSelectExprAs(sql.Expr("COALESCE("+strings.Join(cols, " || char(31) || ")+", '')"), forkText)
	})
	sessions, err := q.All(ctx)
	if err != nil {
		return nil, nil, err
	}
	forks := make([]*ent.SessionFork, 0, len(sessions))
	for _, s := range sessions {
		f, err := forkOf(workspaceID, s)
		if err != nil {
			return nil, nil, err
		}
		if f != nil {
			forks = append(forks, f)
		}
	}
	return sessions, forks, nil
}

// forkOf builds the lineage row read beside s; nil when s is a root.
func forkOf(workspaceID string, s *ent.AgentSession) (*ent.SessionFork, error) {
	v, err := s.Value(forkText)
	if err != nil {
		return nil, fmt.Errorf("read %s's lineage row: %w", s.ID, err)
	}
	text, _ := v.(string)
	if text == "" {
		return nil, nil // no row: a root
	}
	f := strings.SplitN(text, forkSep, len(forkColumns))
	if len(f) != len(forkColumns) {
		return nil, fmt.Errorf("read %s's lineage row: %d values, want %d", s.ID, len(f), len(forkColumns))
	}
	id, err := strconv.Atoi(f[0])
	if err != nil {
		return nil, fmt.Errorf("read %s's lineage row id: %w", s.ID, err)
	}
	at, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return nil, fmt.Errorf("read %s's fork time: %w", s.ID, err)
	}
	return &ent.SessionFork{
		ID: id, WorkspaceID: workspaceID, ChildAgentSessionID: s.ID, ForkedAtUnixMs: at,
		ParentAgentSessionID: f[2], ChildProviderSessionID: f[3], ParentProviderSessionID: f[4],
		Provider: f[5], ForkTurnID: f[6], ForkRequestFingerprint: f[7], ForkRequestID: f[8],
	}, nil
}
