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

// Message is the spec's workspace_agent_messages row: one provider item of a
// session. Its id is the provider's item id, unique per session only, since
// a fork child keeps its parent's item ids.
type Message struct {
	ent.Schema
}

func (Message) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Table("workspace_agent_messages")}
}

func (Message) Fields() []ent.Field {
	return []ent.Field{
		field.String("message_id").NotEmpty().Immutable(),
		field.String("agent_session_id").NotEmpty().Immutable(),
		field.String("workspace_id").NotEmpty().Immutable(),
		field.String("turn_id").Default(""),
		field.String("role").NotEmpty(),
		field.String("kind").Default(""),
		field.Text("text").Default(""),
		field.JSON("content", json.RawMessage{}).StorageKey("content_json").SchemaType(jsonBytes()).Optional(),
		field.String("status").Default("completed"),
		// version increases per session in insertion order; cursors use it.
		field.Int64("version").Immutable(),
		field.Time("created_at").Default(time.Now).Immutable(),
		field.Time("updated_at").Default(time.Now).UpdateDefault(time.Now),
	}
}

func (Message) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("session", AgentSession.Type).Ref("messages").
			Field("agent_session_id").Unique().Required().Immutable(),
	}
}

func (Message) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("agent_session_id", "message_id").Unique(),
		index.Fields("agent_session_id", "version").Unique(),
		index.Fields("agent_session_id", "turn_id"),
		// Only the items a run left in progress: Reconcile finds them at
		// start without reading every message (a full scan of a 1 GB table
		// otherwise). SQLite uses a partial index only for a query that
		// spells the same literal (session.InProgressItems).
		index.Fields("status").StorageKey("message_in_progress").
			Annotations(entsql.IndexWhere("status = 'in_progress'")),
	}
}
