package session

import (
	"entgo.io/ent/dialect/sql"

	"tuttid/agent"
	"tuttid/ent/message"
	"tuttid/ent/predicate"
	"tuttid/ent/turn"
)

// inProgressItems and runningTurns select what a run left in progress, with
// the literal of their partial indexes (ent/schema): SQLite uses a partial
// index only when the query spells its condition, not for a bound
// parameter, and without them the start reads every message of the
// database.
func inProgressItems() predicate.Message {
	return func(s *sql.Selector) {
		s.Where(sql.ExprP(s.C(message.FieldStatus) + " = '" + agent.ItemInProgress + "'"))
	}
}

func runningTurns() predicate.Turn {
	return func(s *sql.Selector) {
		s.Where(sql.ExprP(s.C(turn.FieldStatus) + " = '" + string(turn.StatusIN_PROGRESS) + "'"))
	}
}
