package schema

import (
	"time"

	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Exploration is one exploreSession: N worktree forks of one session from
// one of its turns, a check run in each, and what the person chose. The
// parent's owner instance owns it (starts its queued branches, runs its
// checks).
type Exploration struct {
	ent.Schema
}

func (Exploration) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Table("workspace_agent_explorations")}
}

func (Exploration) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").StorageKey("exploration_id").NotEmpty().Immutable(),
		field.String("workspace_id").NotEmpty().Immutable(),
		field.String("parent_agent_session_id").NotEmpty().Immutable(),
		field.String("request_id").NotEmpty().Immutable(),
		// fingerprint of the whole request: a requestId used again with
		// other parameters is agent.fork_request_conflict.
		field.String("fingerprint").NotEmpty().Immutable(),
		// last_turn_id is the turn explored from; "" for the whole
		// conversation.
		field.String("last_turn_id").Default("").Immutable(),
		field.Text("prompt").Default("").Immutable(),
		// check_command in effect for the branches ("" runs none) and its
		// time bound.
		field.Text("check_command").Default("").Immutable(),
		field.Int64("check_timeout_ms").Immutable(),
		field.String("winner_branch").Default(""),
		// stopped_at: the person stopped it (stopExploration): no branch's
		// first turn starts after it.
		field.Time("stopped_at").Optional().Nillable(),
		field.Time("created_at").Default(time.Now).Immutable(),
		field.Time("updated_at").Default(time.Now).UpdateDefault(time.Now),
	}
}

func (Exploration) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("parent", AgentSession.Type).Ref("explorations").
			Field("parent_agent_session_id").Unique().Required().Immutable(),
		edge.To("branches", ExplorationBranch.Type).
			Annotations(entsql.OnDelete(entsql.Cascade)),
	}
}

func (Exploration) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("workspace_id", "request_id").Unique(),
		index.Fields("parent_agent_session_id"),
	}
}
