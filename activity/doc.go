// Package activity is the in-process broker behind the GraphQL `activity`
// subscription: services Publish an Event after their store transaction
// commits, and each subscription receives the events of one workspace
// (optionally one agent session), in sequence order. It knows nothing of
// GraphQL.
//
// Semantics:
//   - Subscribed: the first event of every subscription, in its channel
//     once it is registered; its Seq is the latest seq of the workspace (or
//     Filter.AfterSeq when resuming, before the replay). A client that waits
//     for it, then reads state with queries and applies later events by
//     Seq, misses nothing: events are published after their commit.
//   - Sequence: Publish numbers events 1, 2, 3… per workspace, in the
//     order subscribers receive them.
//   - Drop: Publish never waits for a subscriber. One that lags more than
//     Options.Buffer events behind receives a final Resync event (Err is a
//     *ResyncError with ReasonDropped) and its channel is closed.
//   - Resume: AfterSeq is the Seq of the last event received, whatever its
//     Kind (a Resync event carries the seq it stopped after).
//   - Replay: the last Options.Window events of each workspace are kept. A
//     subscriber passing Filter.AfterSeq first receives the retained events
//     after it, then live ones, with no gap and no duplicate; if that is
//     impossible (too old, unknown seq) Subscribe returns a *ResyncError.
//   - Resync: both outcomes match errors.Is(err, ErrResyncRequired); the
//     client must reload state from queries and subscribe again.
//   - Lifetime: cancelling the subscription context closes its channel;
//     the broker runs no goroutine per subscriber.
//
// Several instances on one PostgreSQL database share one numbering per
// workspace (activity/pgfeed): there the events are numbered by the
// database and handed to each instance's Broker with Start and Deliver
// (external.go) instead of Publish; the window, the subscribers and the
// drops are the same. Feed is what the server uses, either way.
//
// Events are shared, not copied deeply: treat them as immutable.
package activity
