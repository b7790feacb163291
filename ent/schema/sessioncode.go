package schema

import (
	"time"

	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
)

// SessionCode is the code side of a session in a git repository (the
// contract's "Code branches"): where its files are, the checkpoint a
// worktree was made from, what was last applied back, and the worktree
// tuttid made and must clean up. Sessions outside a repository have no
// row; the row goes with the session (cascade).
type SessionCode struct {
	ent.Schema
}

func (SessionCode) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Table("workspace_agent_session_code")}
}

func (SessionCode) Fields() []ent.Field {
	return []ent.Field{
		field.String("agent_session_id").NotEmpty().Immutable().Unique(),
		field.String("workspace_id").NotEmpty().Immutable(),
		field.Enum("mode").Values("SHARED", "WORKTREE").Default("SHARED").Immutable(),
		// repository_root is the top level of the working tree the session
		// works in: the parent's for SHARED, the worktree for WORKTREE.
		field.String("repository_root").NotEmpty(),
		// common_dir is the repository's git directory shared by its
		// worktrees: where refs/tuttid/ live and what "same repository" means.
		field.String("common_dir").Default(""),
		// worktree_path is set for WORKTREE: the directory tuttid made and
		// is the only one it may remove.
		field.String("worktree_path").Default(""),
		field.Bool("worktree_present").Default(false),
		field.String("branch").Default(""),
		// base_*: the checkpoint a WORKTREE session was made from.
		field.String("base_commit").Default(""),
		field.String("base_head").Default(""),
		field.Time("base_at").Optional().Nillable(),
		// start_commit: the session's files when it started (or got them
		// from a fork), so its first turn's diff is that turn's own.
		field.String("start_commit").Default(""),
		// applied_commit: the session's files the last successful
		// applySessionChanges brought back (delete's "unapplied changes").
		field.String("applied_commit").Default(""),
		// applied_to_commit and applied_to_at: the session's files as an
		// apply into them left them (a checkpoint taken right after), when:
		// the next turn's diff starts there, so that what the apply wrote
		// is not credited to that turn.
		field.String("applied_to_commit").Default(""),
		field.Time("applied_to_at").Optional().Nillable(),
		// archive_commit: the checkpoint archiving took before removing the
		// worktree; restore makes the worktree again from it.
		field.String("archive_commit").Default(""),
		field.Text("setup_output").Default(""),
		// port_base is the first of 10 ports TUTTID_PORT_BASE gave the
		// worktree's setup; 0 when none.
		field.Int("port_base").Default(0),
		field.Time("created_at").Default(time.Now).Immutable(),
		field.Time("updated_at").Default(time.Now).UpdateDefault(time.Now),
	}
}

func (SessionCode) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("session", AgentSession.Type).Ref("code").
			Field("agent_session_id").Unique().Required().Immutable(),
	}
}
