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

// ExplorationBranch is one branch of an exploration: the fork it made (an
// ordinary WORKTREE fork), its first message, and how far it got.
type ExplorationBranch struct {
	ent.Schema
}

func (ExplorationBranch) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Table("workspace_agent_exploration_branches")}
}

func (ExplorationBranch) Fields() []ent.Field {
	return []ent.Field{
		field.String("exploration_id").NotEmpty().Immutable(),
		field.Int("ordinal").Immutable(),
		field.String("name").NotEmpty().Immutable(),
		field.Text("prompt").Immutable(),
		// settings are the overrides of the parent's settings as asked
		// (session.SettingsOverride's JSON).
		field.JSON("settings", json.RawMessage{}).StorageKey("settings_json").SchemaType(jsonBytes()).Immutable(),
		// fork_request_id is the fork's requestId, <requestId>.<name>.
		field.String("fork_request_id").NotEmpty().Immutable(),
		// child_agent_session_id is the fork, once made; "" before and
		// when it failed.
		field.String("child_agent_session_id").Default(""),
		// state: forking (the fork is being made), queued (its first turn
		// waits for the turn bound), started (the first turn was sent),
		// failed (the fork or its first turn failed: error_code, error),
		// stopped (the exploration was stopped before its first turn
		// started; a turn the person starts there makes it started).
		field.Enum("state").Values("forking", "queued", "started", "failed", "stopped").Default("forking"),
		field.String("error_code").Default(""),
		field.Text("error").Default(""),
		field.Time("queued_at").Optional().Nillable(),
		// applied_at: applied to the parent; told_at: its summary was
		// given to the parent's thread (summary kept, shown there).
		field.Time("applied_at").Optional().Nillable(),
		field.Time("told_at").Optional().Nillable(),
		// telling_at: the summary is being given (recorded, with summary,
		// before Codex is asked). Set without told_at after the call, the
		// telling is uncertain: Codex keeps injected items where no read
		// shows them, so only the person can say to tell again.
		field.Time("telling_at").Optional().Nillable(),
		// A review by Codex (reviewExplorationBranch): reviewing_at while
		// it runs, then reviewed_at with review (its text) or review_error.
		field.Time("reviewing_at").Optional().Nillable(),
		field.Time("reviewed_at").Optional().Nillable(),
		field.Text("review").Default(""),
		field.Text("review_error").Default(""),
		field.Text("summary").Default(""),
		field.String("told_after_turn_id").Default(""),
		field.Time("created_at").Default(time.Now).Immutable(),
	}
}

func (ExplorationBranch) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("exploration", Exploration.Type).Ref("branches").
			Field("exploration_id").Unique().Required().Immutable(),
	}
}

func (ExplorationBranch) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("exploration_id", "name").Unique(),
		index.Fields("child_agent_session_id"),
	}
}
