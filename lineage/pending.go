package lineage

import (
	"strings"

	"tuttid/ent/predicate"
	"tuttid/ent/turn"
)

// PendingTurnPrefix begins the id of a turn stored before Codex's
// turn/start answered (session's crash-safety record): Codex's id replaces
// it moments later, so no read that names turns lists it.
const PendingTurnPrefix = "pending:"

// IsPendingTurn reports whether turnID is a pending turn's.
func IsPendingTurn(turnID string) bool { return strings.HasPrefix(turnID, PendingTurnPrefix) }

// ListedTurn keeps the turns a read may name: all but pending ones.
func ListedTurn() predicate.Turn { return turn.Not(turn.TurnIDHasPrefix(PendingTurnPrefix)) }
