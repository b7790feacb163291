//go:build tools

// Package tools pins the code generators as module dependencies so that
// `go generate ./...` runs the same versions everywhere.
package tools

import (
	_ "entgo.io/ent/cmd/ent"
	_ "github.com/99designs/gqlgen"
)
