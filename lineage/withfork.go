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
	"tuttid/store"
)

// forkColumns are the lineage row's columns read beside each session, as
// one text column (forkText, the columns joined by forkSep), so that a walk
// reads sessions and lineage in one query: the recursive CTE runs once.
// One column, not nine (each extra column is a value per row in the
// entity's map of selected values), and text, not JSON: decoding JSON cost
// more than the second query saved. It is read with AllWithStrings
// (generated from ent/template), which types it as a string once per
// query, where All asks the driver for every column's type on every row.
// fork_request_id, the one value a client chooses, comes last, so that a
// separator in it cannot shift the others.
var forkColumns = [...]string{
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
	// workspace of 10,000). PostgreSQL has no unary + on text, and its
	// planner needs no such hint.
	inWorkspace := func(s *sql.Selector) {
		col := s.C(agentsession.FieldWorkspaceID)
		if store.DialectOf(s.Dialect()) == store.SQLite {
			col = "+" + col
		}
		s.Where(store.ExprP(col+" = ?", workspaceID))
	}
	q := c.AgentSession.Query().Where(append(where, inWorkspace)...)
	q.Modify(func(s *sql.Selector) {
		f := sql.Table(sessionfork.Table).As("f")
		s.LeftJoin(f).OnP(sql.And(
			sql.ColumnsEQ(f.C(sessionfork.FieldChildAgentSessionID), s.C(agentsession.FieldID)),
			sql.EQ(f.C(sessionfork.FieldWorkspaceID), workspaceID)))
		// NULL for a root (no lineage row); the columns are NOT NULL, so
		// a row present is never NULL.
		cols := make([]string, len(forkColumns))
		for i, col := range forkColumns {
			cols[i] = f.C(col)
		}
		// The separator is a literal (SQLite's char(31) is PostgreSQL's chr(31)).
		s.AppendSelectExprAs(sql.Expr(strings.Join(cols, " || '"+forkSep+"' || ")), forkText)
	})
	sessions, err := q.AllWithStrings(ctx, forkText)
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
	text, _ := v.(string) // nil for NULL
	if text == "" {
		return nil, nil // no row: a root
	}
	// Cut, not SplitN: no slice per row.
	var f [len(forkColumns)]string
	rest := text
	for i := range len(f) - 1 {
		var ok bool
		if f[i], rest, ok = strings.Cut(rest, forkSep); !ok {
			return nil, fmt.Errorf("read %s's lineage row: %d values, want %d", s.ID, i+1, len(f))
		}
	}
	f[len(f)-1] = rest
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
