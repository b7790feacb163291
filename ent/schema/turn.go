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

// Turn is one request/response exchange of a session. Its turn_id is the
// provider's, unique per session only (a fork child keeps its parent's).
type Turn struct {
	ent.Schema
}

func (Turn) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Table("workspace_agent_turns")}
}

func (Turn) Fields() []ent.Field {
	return []ent.Field{
		field.String("turn_id").NotEmpty().Immutable(),
		field.String("agent_session_id").NotEmpty().Immutable(),
		field.Enum("status").Values("IN_PROGRESS", "COMPLETED", "INTERRUPTED", "FAILED").Default("IN_PROGRESS"),
		field.Text("error").Default(""),
		// error_code is the provider's kind of failure (Codex's
		// codexErrorInfo; "unauthorized" for refused credentials).
		field.String("error_code").Default(""),
		field.Time("started_at").Default(time.Now).Immutable(),
		field.Time("completed_at").Optional().Nillable(),
		// checkpoint_*: the session's files when the turn ended, as a
		// commit under refs/tuttid/ (empty outside a repository).
		field.String("checkpoint_commit").Default(""),
		field.String("checkpoint_head").Default(""),
		field.Time("checkpoint_at").Optional().Nillable(),
	}
}

func (Turn) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("session", AgentSession.Type).Ref("turns").
			Field("agent_session_id").Unique().Required().Immutable(),
	}
}

func (Turn) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("agent_session_id", "turn_id").Unique(),
		// Pages of a session's turns in (started_at, id) order: SQLite
		// indexes end with the rowid, which is the id.
		index.Fields("agent_session_id", "started_at"),
		// Only the turns a run left in progress, for the settling at start
		// (session.runningTurns spells the same literal).
		index.Fields("status").StorageKey("turn_in_progress").
			Annotations(entsql.IndexWhere("status = 'IN_PROGRESS'")),
	}
}
