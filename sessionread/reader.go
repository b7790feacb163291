// Package sessionread is the read model of sessions the transports page
// through: workspaces, sessions, messages and turns in pages bounded in
// bytes, lineage reads (parent, children, ancestors, tree, fork points),
// the comparison of two sessions, display titles, and subscriptions
// (checked, then relayed from the broker). A list's per-row fields are
// read for the whole list at once through package readahead (ahead.go).
// It only reads; package session writes.
package sessionread

import "tuttid/store"

// Reader reads sessions for the transports.
type Reader struct {
	store *store.Store
	sub   Subscriber
}

// Config wires a Reader.
type Config struct {
	Store *store.Store
	// Subscriber serves subscriptions to the activity (nil: none).
	Subscriber Subscriber
}

// New returns a Reader.
func New(cfg Config) *Reader { return &Reader{store: cfg.Store, sub: cfg.Subscriber} }
