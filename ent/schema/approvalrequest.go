package schema

import (
	"encoding/json"
	"time"

	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// ApprovalRequest is a question the provider asked the session's person
// (run this command? apply this change?), kept so a GUI opened later still
// shows it, with its answer once resolved.
type ApprovalRequest struct {
	ent.Schema
}

func (ApprovalRequest) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Table("workspace_agent_approvals")}
}

func (ApprovalRequest) Fields() []ent.Field {
	return []ent.Field{
		// id is the runtime's id for the request (a UUIDv7).
		field.String("id").StorageKey("approval_id").NotEmpty().Immutable(),
		field.String("agent_session_id").NotEmpty().Immutable(),
		field.String("workspace_id").NotEmpty().Immutable(),
		field.String("turn_id").Default("").Immutable(),
		field.String("item_id").Default("").Immutable(),
		field.Enum("kind").Values("COMMAND", "FILE_CHANGE", "PERMISSIONS", "USER_INPUT", "MCP_ELICITATION").Immutable(),
		// method is the provider's request method.
		field.String("method").Default("").Immutable(),
		field.Text("command").Default("").Immutable(),
		field.String("cwd").Default("").Immutable(),
		field.Text("reason").Default("").Immutable(),
		field.JSON("details", json.RawMessage{}).StorageKey("details_json").SchemaType(jsonBytes()).Optional().Immutable(),
		field.Strings("available_decisions").SchemaType(jsonBytes()).Immutable(),
		field.Time("created_at").Default(time.Now).Immutable(),
		field.Time("resolved_at").Optional().Nillable(),
		field.Enum("decision").Values("ACCEPT", "ACCEPT_FOR_SESSION", "ACCEPT_ALWAYS", "DECLINE", "CANCEL").Optional().Nillable(),
		// resolved_by: "user", or why tuttid settled it (turn_ended,
		// runtime_exit, provider, restart).
		field.String("resolved_by").Default(""),
	}
}

func (ApprovalRequest) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("session", AgentSession.Type).Ref("approvals").
			Field("agent_session_id").Unique().Required().Immutable(),
	}
}

func (ApprovalRequest) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("agent_session_id", "created_at"),
		index.Fields("resolved_at"),
	}
}
