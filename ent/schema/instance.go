package schema

import (
	"time"

	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
)

// Instance is one tuttid process sharing the database: where the others
// reach it and when it last said it was alive. A session's instance_id
// names its owner (the instance whose Codex holds its thread).
type Instance struct {
	ent.Schema
}

func (Instance) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Table("tuttid_instances")}
}

func (Instance) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").StorageKey("instance_id").NotEmpty().Immutable(),
		// advertise_url is the base URL at which the other instances
		// forward commands to this one (--advertise-url).
		field.String("advertise_url").Default(""),
		field.Time("started_at").Default(time.Now),
		// heartbeat_at is renewed every few seconds; an instance whose
		// heartbeat is old is down (instance.DownAfter).
		field.Time("heartbeat_at").Default(time.Now),
	}
}
