package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// SessionFork is the spec's workspace_agent_session_forks row: the lineage
// of a forked session. A child has at most one row (its one parent); both
// foreign keys cascade, so deleting either session removes the row.
type SessionFork struct {
	ent.Schema
}

func (SessionFork) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Table("workspace_agent_session_forks")}
}

func (SessionFork) Fields() []ent.Field {
	return []ent.Field{
		field.String("workspace_id").NotEmpty().Immutable(),
		field.String("child_agent_session_id").NotEmpty().Immutable(),
		field.String("parent_agent_session_id").NotEmpty().Immutable(),
		field.String("child_provider_session_id").Default("").Immutable(),
		field.String("parent_provider_session_id").Default("").Immutable(),
		field.String("provider").Default("").Immutable(),
		field.String("fork_turn_id").Default("").Immutable(),
		field.String("fork_request_id").Default("").Immutable(),
		field.String("fork_request_fingerprint").Default("").Immutable(),
		field.Int64("forked_at_unix_ms").Immutable(),
	}
}

func (SessionFork) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("child", AgentSession.Type).Ref("fork_origin").
			Field("child_agent_session_id").Unique().Required().Immutable(),
		edge.From("parent", AgentSession.Type).Ref("fork_children").
			Field("parent_agent_session_id").Unique().Required().Immutable(),
	}
}

func (SessionFork) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("workspace_id", "fork_request_id").Unique(),
		index.Fields("workspace_id", "parent_agent_session_id").
			StorageKey("idx_workspace_agent_session_forks_parent"),
		// The cascade from a deleted parent looks rows up by this column
		// alone; without it SQLite scans the table on every session delete.
		index.Fields("parent_agent_session_id"),
	}
}
