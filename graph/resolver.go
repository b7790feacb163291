package graph

import (
	"log/slog"

	"tuttid/activity"
	"tuttid/fork"
	"tuttid/session"
)

// Resolver holds the services the resolvers translate GraphQL to.
type Resolver struct {
	Lifecycle *session.Service
	Tooling   LineageTooling
	Forks     *fork.Service
	Broker    *activity.Broker
	Logger    *slog.Logger
}
