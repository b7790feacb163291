package session

import "github.com/google/uuid"

// NewID returns a time-ordered UUIDv7, the same form Codex uses for threads.
func NewID() string { return uuid.Must(uuid.NewV7()).String() }
