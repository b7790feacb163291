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

func (s *Service) ownSessions() []predicate.AgentSession {
	if s.instanceID == "" {
		return nil
	}
	return []predicate.AgentSession{agentsession.InstanceID(s.instanceID)}
}

func (s *Service) ownItems() []predicate.Message {
	if s.instanceID == "" {
		return nil
	}
	return []predicate.Message{message.HasSessionWith(agentsession.InstanceID(s.instanceID))}
}

func (s *Service) ownApprovals() []predicate.ApprovalRequest {
	if s.instanceID == "" {
		return nil
	}
	return []predicate.ApprovalRequest{approvalrequest.HasSessionWith(agentsession.InstanceID(s.instanceID))}
}

// ownTurns keeps the turns (read WithSession) of this instance's sessions.
func (s *Service) ownTurns(turns []*ent.Turn) []*ent.Turn {
	if s.instanceID == "" {
		return turns
	}
	out := turns[:0]
	for _, t := range turns {
		if t.Edges.Session != nil && t.Edges.Session.InstanceID == s.instanceID {
			out = append(out, t)
		}
	}
	return out
}
