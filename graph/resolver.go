package graph

import (
	"tuttid/fork"
	"tuttid/session"
)

// Resolver holds the services the resolvers translate GraphQL to: the
// session domain for everything but the fork, which is its own saga.
type Resolver struct {
	Sessions *session.Service
	Forks    *fork.Service
}
