package schema

import (
	"time"

	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"tuttid/agent"
)

// AgentSession is the spec's workspace_agent_sessions row: one
// conversation with a provider thread.
type AgentSession struct {
	ent.Schema
}

func (AgentSession) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Table("workspace_agent_sessions")}
}

func (AgentSession) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").StorageKey("agent_session_id").NotEmpty().Immutable(),
		field.String("workspace_id").NotEmpty().Immutable(),
		field.String("provider").NotEmpty().Immutable(),
		field.String("provider_session_id").Default(""),
		field.String("title").Default(""),
		field.Enum("status").Values("READY", "WORKING", "COMPLETED", "FAILED").Default("READY"),
		field.Bool("visible").Default(true),
		// archived puts a session (and, through updateSession, its branch)
		// out of the default listing; it is restorable, nothing is deleted.
		field.Bool("archived").Default(false),
		field.String("cwd").Default(""),
		// instance_id is the tuttid instance whose Codex holds the thread:
		// the one that started the session, or a fork parent's owner.
		field.String("instance_id").Default(""),
		field.JSON("settings", agent.ComposerSettings{}).StorageKey("settings_json").SchemaType(jsonBytes()),
		field.JSON("runtime_context", map[string]any{}).StorageKey("runtime_context_json").SchemaType(jsonBytes()).Optional(),
		// last_message_version hands out the per-session message versions
		// that pagination cursors are built from.
		field.Int64("last_message_version").Default(0),
		// token_usage is the thread's usage as Codex last reported it
		// (thread/tokenUsage/updated); NULL until it reports any.
		field.JSON("token_usage", &agent.TokenUsage{}).StorageKey("token_usage_json").Optional().SchemaType(jsonBytes()),
		field.Time("created_at").Default(time.Now).Immutable(),
		field.Time("updated_at").Default(time.Now).UpdateDefault(time.Now),
	}
}

func (AgentSession) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("workspace", Workspace.Type).Ref("sessions").
			Field("workspace_id").Unique().Required().Immutable(),
		edge.To("messages", Message.Type).
			Annotations(entsql.OnDelete(entsql.Cascade)),
		edge.To("turns", Turn.Type).
			Annotations(entsql.OnDelete(entsql.Cascade)),
		edge.To("approvals", ApprovalRequest.Type).
			Annotations(entsql.OnDelete(entsql.Cascade)),
		// fork_origin is the lineage row where this session is the child.
		edge.To("fork_origin", SessionFork.Type).Unique().
			Annotations(entsql.OnDelete(entsql.Cascade)),
		// fork_children are the lineage rows where this session is the parent.
		edge.To("fork_children", SessionFork.Type).
			Annotations(entsql.OnDelete(entsql.Cascade)),
		// code is the session's code branch, when it works in a repository.
		edge.To("code", SessionCode.Type).Unique().
			Annotations(entsql.OnDelete(entsql.Cascade)),
		// explorations made from this session; check_runs of its turns.
		edge.To("explorations", Exploration.Type).
			Annotations(entsql.OnDelete(entsql.Cascade)),
		edge.To("check_runs", CheckRun.Type).
			Annotations(entsql.OnDelete(entsql.Cascade)),
	}
}

func (AgentSession) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("workspace_id", "title"),
		index.Fields("provider_session_id"),
		index.Fields("instance_id"),
	}
}
