package schema

import (
	"time"

	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
)

// Workspace groups agent sessions that work in one root folder.
type Workspace struct {
	ent.Schema
}

func (Workspace) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Table("workspaces")}
}

func (Workspace) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").StorageKey("workspace_id").NotEmpty().Immutable(),
		field.String("name").NotEmpty(),
		field.String("root_path"),
		// worktree_setup is a shell command run in each new worktree of a
		// worktree fork before the fork answers; empty for none.
		field.Text("worktree_setup").Default(""),
		// check_command is run in an exploration branch's worktree after
		// each of its turns (its default; an exploration may set its own);
		// empty for none. check_timeout_ms bounds it (0: the default).
		field.Text("check_command").Default(""),
		field.Int64("check_timeout_ms").Default(0),
		// command_sandbox is where the check and the worktree setup run:
		// AGENT, in Codex's sandbox with no more than the branch's agent
		// may do (the default); NONE, as the person, unsandboxed.
		field.Enum("command_sandbox").Values("AGENT", "NONE").Default("AGENT"),
		field.Time("created_at").Default(time.Now).Immutable(),
		field.Time("updated_at").Default(time.Now).UpdateDefault(time.Now),
	}
}

func (Workspace) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("sessions", AgentSession.Type).
			Annotations(entsql.OnDelete(entsql.Cascade)),
	}
}
