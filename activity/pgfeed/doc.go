// Package pgfeed is the activity feed of several tuttid instances on one
// PostgreSQL database: one seq per workspace across instances, every event
// to every subscriber of every instance, in seq order, without gaps or
// duplicates.
//
// How: Publish queues the event (it never blocks the publisher); one writer
// goroutine inserts the queued events in order into activity_events, each
// taking its seq from the workspace's row of activity_seqs in the same
// statement (the row lock makes seqs commit in seq order, and a rolled back
// insert gives its number back, so a workspace's seqs are contiguous), and
// sends a NOTIFY "workspace seq" that PostgreSQL delivers at commit. Every
// instance LISTENs on a connection of its own; a notification, a commit of
// its own, or a reconnect makes it read the workspace's rows after the last
// seq it delivered and hand them to its local activity.Broker (Deliver),
// which keeps the window and the subscribers as on SQLite.
//
// Only workspaces that some subscriber asked for on this instance are read
// (Subscribe starts them from the table: the latest seq and the last
// window's events). The table keeps about twice the replay window per
// workspace (pruned by seq); an instance cut off for longer than that ends
// its subscriptions with a Resync (activity.ReasonMissed) rather than skip
// events silently. While PostgreSQL is down the writer keeps the queue and
// retries, and the listener reconnects and catches up from the table.
//
// The events of a stored change do not wait in memory: the service stages
// them in activity_outbox in the change's own transaction (Stage, the
// activity.Outbox), and after the commit queues only their keys
// (Committed); the writer moves each row into activity_events in queue
// order. A process killed in between leaves the rows, which its next run
// (or, after SweepAfter, any instance) moves (outbox.go). Streaming deltas
// and notices, which announce nothing stored, keep the queue: a kill
// loses those, as it loses them on SQLite.
package pgfeed
