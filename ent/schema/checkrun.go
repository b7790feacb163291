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

// CheckRun is one run of a check command in a session's worktree after
// one of its turns ended.
type CheckRun struct {
	ent.Schema
}

func (CheckRun) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Table("workspace_agent_check_runs")}
}

func (CheckRun) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").StorageKey("check_run_id").NotEmpty().Immutable(),
		field.String("workspace_id").NotEmpty().Immutable(),
		field.String("agent_session_id").NotEmpty().Immutable(),
		field.String("turn_id").NotEmpty().Immutable(),
		field.String("exploration_id").Default("").Immutable(),
		// state: running, passed, failed, timed_out, error (could not
		// start), interrupted (tuttid stopped while it ran).
		field.Enum("state").Values("running", "passed", "failed", "timed_out", "error", "interrupted").Default("running"),
		field.Int("exit_code").Optional().Nillable(),
		field.Int64("duration_ms").Optional().Nillable(),
		// output: the last 64 KiB of stdout and stderr as written.
		field.Text("output").Default(""),
		field.Bool("output_truncated").Default(false),
		// pgid of the running check's process group, so that a start after
		// a crash can stop it; 0 once it ended.
		field.Int("pgid").Default(0),
		field.Time("started_at").Default(time.Now).Immutable(),
		field.Time("finished_at").Optional().Nillable(),
	}
}

func (CheckRun) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("session", AgentSession.Type).Ref("check_runs").
			Field("agent_session_id").Unique().Required().Immutable(),
	}
}

func (CheckRun) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("agent_session_id", "turn_id").Unique(),
		index.Fields("state"),
	}
}
