package graph

import (
	"tuttid/codebranch"
	"tuttid/fork"
	"tuttid/instance"
	"tuttid/session"
)

// Resolver holds the services the resolvers translate GraphQL to: the
// session domain for everything but the fork, which is its own saga.
type Resolver struct {
	Sessions *session.Service
	Forks    *fork.Service
	// Code is the code side of sessions (checkpoints, changes, apply).
	Code *codebranch.Service
	// Instances: the owners' liveness; nil when every session is available.
	Instances *instance.Registry
}
