package session

import (
	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/ent/approvalrequest"
	"tuttid/ent/message"
	"tuttid/ent/predicate"
)

// What the start settles is this instance's only: several instances may
// share the database, and another's running turns are running in its
// Codex, not dead with this one's. A service without an instance id (the
// package tests) owns everything. Running turns are few and read with
// their session, so they are filtered here: a predicate on the session in
// their query would keep PostgreSQL off their partial index.

// owner is this instance's id, as the filters of what it settles ("":
// every session).
type owner string

func (o owner) sessions() []predicate.AgentSession {
	if string(o) == "" {
		return nil
	}
	return []predicate.AgentSession{agentsession.InstanceID(string(o))}
}

func (o owner) items() []predicate.Message {
	if string(o) == "" {
		return nil
	}
	return []predicate.Message{message.HasSessionWith(agentsession.InstanceID(string(o)))}
}

func (o owner) approvals() []predicate.ApprovalRequest {
	if string(o) == "" {
		return nil
	}
	return []predicate.ApprovalRequest{approvalrequest.HasSessionWith(agentsession.InstanceID(string(o)))}
}

// turns keeps the turns (read WithSession) of this instance's sessions.
func (o owner) turns(turns []*ent.Turn) []*ent.Turn {
	if string(o) == "" {
		return turns
	}
	out := turns[:0]
	for _, t := range turns {
		if t.Edges.Session != nil && t.Edges.Session.InstanceID == string(o) {
			out = append(out, t)
		}
	}
	return out
}
