package graph

import (
	"tuttid/account"
	"tuttid/codebranch"
	"tuttid/explore"
	"tuttid/fork"
	"tuttid/instance"
	"tuttid/session"
	"tuttid/sessionread"
)

// Resolver holds the services the resolvers translate GraphQL to: the
// session domain's commands, its read model, the account, and the fork, which is its
// own saga.
type Resolver struct {
	Sessions *session.Service
	// Reads is the read model: what queries page through.
	Reads *sessionread.Reader
	// Accounts is Codex's account: sign-in, logins, models, rate limits.
	Accounts *account.Service
	Forks    *fork.Service
	// Code is the code side of sessions (checkpoints, changes, apply).
	Code *codebranch.Service
	// Explore runs explorations.
	Explore *explore.Service
	// Instances: the owners' liveness; nil when every session is available.
	Instances *instance.Registry
}
