package schema

import (
	"time"

	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// ApplyJournal records an apply's write of a target's files (gitrepo's
// ApplyWrite) before its first file is written, and each phase before it
// starts, so that the next start settles a write a crash cut short: its
// staging removed, or its swap undone (codebranch.ReconcileApplies). A
// row lives while its write does: it is deleted once the write is
// settled. No foreign keys: a write outlives a session deleted meanwhile
// (its files still have to be put back).
type ApplyJournal struct {
	ent.Schema
}

func (ApplyJournal) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Table("code_apply_journal")}
}

func (ApplyJournal) Fields() []ent.Field {
	return []ent.Field{
		// apply_id names the write: its staging directory and kept ref.
		field.String("apply_id").NotEmpty().Immutable().Unique(),
		field.String("target_agent_session_id").NotEmpty().Immutable(),
		// instance_id is the instance that applies: the checkout is on its
		// machine, and only it settles the write at its start.
		field.String("instance_id").Default("").Immutable(),
		// root is the target's checkout; staging the directory of the
		// write's staged and moved-aside files.
		field.String("root").NotEmpty().Immutable(),
		field.String("staging").NotEmpty().Immutable(),
		// kept_ref keeps kept_commit: the target's files before the apply.
		field.String("kept_ref").NotEmpty().Immutable(),
		field.String("kept_commit").NotEmpty().Immutable(),
		field.String("merged_tree").NotEmpty().Immutable(),
		// paths: the paths written (gitrepo.EncodePaths: bytes, as git's).
		field.Bytes("paths").Immutable(),
		// staging: files being staged, the target's untouched; swapping:
		// the target's files being swapped (undone after a crash); done:
		// all written, the staging left to remove.
		field.Enum("state").Values("staging", "swapping", "done").Default("staging"),
		field.Time("created_at").Default(time.Now).Immutable(),
		field.Time("updated_at").Default(time.Now),
	}
}

func (ApplyJournal) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("instance_id"),
		index.Fields("target_agent_session_id"),
	}
}
