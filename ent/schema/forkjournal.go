package schema

import (
	"time"

	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// ForkJournal records each fork attempt before the provider is called, so
// that a crash at any point of the saga leaves a trail: the provider thread
// it made (once known) and how the request ended. It has no foreign keys on
// purpose: an entry outlives the sessions it names, since an orphan thread
// must stay findable after its parent is deleted.
type ForkJournal struct {
	ent.Schema
}

func (ForkJournal) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Table("workspace_agent_fork_journal")}
}

func (ForkJournal) Fields() []ent.Field {
	return []ent.Field{
		field.String("workspace_id").NotEmpty().Immutable(),
		field.String("request_id").NotEmpty().Immutable(),
		field.String("fingerprint").Immutable(),
		field.String("parent_agent_session_id").NotEmpty().Immutable(),
		field.String("parent_provider_session_id").Default(""),
		field.String("child_agent_session_id").Default(""),
		field.String("provider").Default(""),
		field.String("cwd").Default(""),
		field.String("last_turn_id").Default(""),
		// worktree_path: the worktree a WORKTREE fork makes for its child,
		// recorded before it is made, so that a crash leaves a directory
		// tuttid can find and remove (tuttid orphans, Reconcile).
		field.String("worktree_path").Default(""),
		// pending: recorded, the provider not yet answered; forked: the
		// provider answered with child_provider_session_id, not yet stored;
		// done: the child is stored (same transaction); failed: the provider
		// made no thread; orphaned: a thread exists that no session owns;
		// archived: that thread was archived at the provider.
		field.Enum("state").Values("pending", "forked", "done", "failed", "orphaned", "archived").Default("pending"),
		field.String("child_provider_session_id").Default(""),
		field.Text("error").Default(""),
		// instance_id is the instance that wrote the entry: its Codex made
		// the thread, and only it reconciles the entry at its start.
		field.String("instance_id").Default(""),
		field.Time("created_at").Default(time.Now).Immutable(),
		field.Time("updated_at").Default(time.Now),
	}
}

func (ForkJournal) Indexes() []ent.Index {
	return []ent.Index{
		// One row per attempt: a request whose attempt failed may be retried,
		// and the failed attempt's orphan must stay listed.
		index.Fields("workspace_id", "request_id"),
		index.Fields("state"),
		// One attempt in flight per child id: two requests naming the same
		// targetAgentSessionId at once would otherwise both make (and the
		// loser undo) the one worktree, branch and refs of that child.
		index.Fields("child_agent_session_id").Unique().
			Annotations(entsql.IndexWhere("state IN ('pending', 'forked') AND child_agent_session_id <> ''")),
	}
}
