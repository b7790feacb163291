package pgfeed

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"tuttid/activity"
)

// queued is an event waiting for the database.
type queued struct {
	e       activity.Event
	id      string // makes a retried insert idempotent
	payload []byte
	// outbox, when set, is the key of a staged event (Committed): the
	// writer moves it from the outbox; e and payload are not used.
	outbox string
	// numbered, when set (PublishWait), receives the event as stored, or
	// with Seq 0 if it was not.
	numbered chan activity.Event
}

// writeBatch bounds the events written in one transaction.
const writeBatch = 256

// inlineMax bounds the payload a notification carries (PostgreSQL's limit
// is 8000 bytes): a small event reaches the other instances inside its
// notification, without a read of the table.
const inlineMax = 7000

// notifyOf is the SQL that notifies the listeners of an event stored with
// seq and at from SQL expressions ws and payload: "workspace seq", then,
// for a payload of at most inlineMax bytes, " at payload" (at in Unix
// microseconds). insert and the outbox's move both end with it.
func notifyOf(ws, payload string) string {
	return fmt.Sprintf(`pg_notify('%s', %s || ' ' || seq ||
	CASE WHEN octet_length(%s) <= %d THEN ' ' || (extract(epoch FROM at) * 1000000)::bigint || ' ' || convert_from(%s, 'UTF8') ELSE '' END)::text`,
		channel, ws, payload, inlineMax, payload)
}

// insert numbers one event from its workspace's counter, stores it and
// notifies the listeners (at commit, notifyOf), in one statement. An
// event already stored (a retry after a commit whose answer was lost)
// takes no number and returns no row.
var insert = `
WITH c AS (
	INSERT INTO activity_seqs AS c (workspace_id, seq)
	SELECT $1, $2 WHERE NOT EXISTS (SELECT 1 FROM activity_events WHERE id = $3)
	ON CONFLICT (workspace_id) DO UPDATE SET seq = c.seq + 1
	RETURNING seq
), e AS (
	INSERT INTO activity_events (workspace_id, seq, id, at, payload)
	SELECT $1, seq, $3, clock_timestamp(), $4 FROM c
	RETURNING seq, at
)
SELECT seq, at, ` + notifyOf("$1", "$4") + `
FROM e`

// Publish queues e for the database and returns it with Seq 0: its seq is
// the database's, known once stored. It never waits for the database, so
// that a publisher holding a session's lock is not stalled by an outage;
// the queue's order is the order of the seqs this instance takes. Call it
// after the store committed the change, as with activity.Broker.
func (f *Feed) Publish(ctx context.Context, e activity.Event) activity.Event {
	e, _ = f.enqueue(ctx, e, nil)
	return e
}

// PublishWait is Publish, then waits until the event is stored and
// returns it numbered (tests and tools that need its seq; the services
// use Publish, which does not wait).
func (f *Feed) PublishWait(ctx context.Context, e activity.Event) (activity.Event, error) {
	numbered := make(chan activity.Event, 1)
	if e, ok := f.enqueue(ctx, e, numbered); !ok {
		return e, fmt.Errorf("activity: event %s not published", e.Kind)
	}
	select {
	case n := <-numbered:
		if n.Seq == 0 {
			return n, fmt.Errorf("activity: event %s not stored", e.Kind)
		}
		return n, nil
	case <-ctx.Done():
		return e, ctx.Err()
	}
}

// check completes e's workspace and session from its Session and reports
// whether it may be published (logged if not).
func (f *Feed) check(ctx context.Context, e activity.Event) (activity.Event, bool) {
	if e.Session != nil {
		if e.WorkspaceID == "" {
			e.WorkspaceID = e.Session.WorkspaceID
		}
		if e.AgentSessionID == "" {
			e.AgentSessionID = e.Session.ID
		}
	}
	e.Seq = 0
	if e.WorkspaceID == "" || e.Kind == activity.Resync || e.Kind == activity.Subscribed {
		f.log.ErrorContext(ctx, "activity: event not published: no workspace ID or reserved kind", "kind", e.Kind, "session", e.AgentSessionID)
		return e, false
	}
	return e, true
}

// enqueue queues e (see Publish) and reports whether it did.
func (f *Feed) enqueue(ctx context.Context, e activity.Event, numbered chan activity.Event) (activity.Event, bool) {
	e, ok := f.check(ctx, e)
	if !ok {
		return e, false
	}
	payload, err := encode(e)
	if err != nil {
		f.log.ErrorContext(ctx, "activity: event not published", "kind", e.Kind, "workspace", e.WorkspaceID, "err", err)
		return e, false
	}
	f.mu.Lock()
	switch {
	case f.closed:
		f.mu.Unlock()
		return e, false
	case len(f.queue) >= f.qmax:
		f.mu.Unlock()
		f.log.ErrorContext(ctx, "activity: event not published: the database is unreachable and the queue is full",
			"kind", e.Kind, "workspace", e.WorkspaceID, "queue", f.qmax)
		return e, false
	}
	f.queue = append(f.queue, queued{e: e, id: uuid.NewString(), payload: payload, numbered: numbered})
	f.mu.Unlock()
	f.signal()
	return e, true
}

func (f *Feed) signal() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// take waits for queued events and returns up to writeBatch of them
// (still queued: done removes them), or none when due fires first; ok is
// false once the feed is closed and the queue empty, or ctx is done.
func (f *Feed) take(ctx context.Context, due <-chan time.Time) (batch []queued, ok bool) {
	for {
		f.mu.Lock()
		batch, closed := f.queue[:min(len(f.queue), writeBatch)], f.closed
		f.mu.Unlock()
		if len(batch) > 0 {
			return batch, true
		}
		if closed {
			return nil, false
		}
		select {
		case <-f.wake:
		case <-due:
			return nil, true
		case <-ctx.Done():
			return nil, false
		}
	}
}

// done removes the first n queued events.
func (f *Feed) done(n int) {
	f.mu.Lock()
	f.queue = append(f.queue[:0:0], f.queue[n:]...)
	f.mu.Unlock()
}

// write stores the queued events in order until the feed closes, retrying
// while the database is unreachable, then hands them to the local
// subscribers.
func (f *Feed) write(ctx context.Context) {
	backoff := 50 * time.Millisecond
	failing := false
	tick := time.NewTicker(max(f.grace/2, 10*time.Millisecond))
	defer tick.Stop()
	for {
		batch, ok := f.take(ctx, tick.C)
		if !ok {
			return
		}
		if len(batch) == 0 {
			if n, err := f.sweep(ctx, false); err != nil {
				f.log.WarnContext(ctx, "activity: outbox sweep failed; next one later", "err", err)
			} else if n > 0 {
				f.log.InfoContext(ctx, "activity: published events left in the outbox", "events", n)
			}
			continue
		}
		stored, err := f.store(ctx, batch)
		if err != nil {
			if ctx.Err() != nil {
				f.log.Error("activity: events not published: stopped while the database was unreachable", "events", len(batch), "err", err)
				return
			}
			if !failing {
				f.log.WarnContext(ctx, "activity: cannot store events; retrying", "events", len(batch), "err", err)
				failing = true
			}
			if f.db.PingContext(ctx) == nil && !retryable(err) {
				// The database answers but refuses these events: not
				// worth holding the others back for.
				f.log.ErrorContext(ctx, "activity: events not published: refused by the database", "events", len(batch), "err", err)
				f.done(len(batch))
				answer(batch, make([]activity.Event, len(batch)))
				continue
			}
			select {
			case <-time.After(backoff):
			case <-ctx.Done():
			}
			backoff = min(2*backoff, time.Second)
			continue
		}
		if failing {
			f.log.InfoContext(ctx, "activity: storing events again")
			failing = false
		}
		backoff = 50 * time.Millisecond
		f.done(len(batch))
		f.deliver(ctx, stored)
		answer(batch, stored)
		f.prune(ctx, stored)
	}
}

// deliver hands the stored events (Seq 0: not stored now) to the local
// subscribers.
func (f *Feed) deliver(ctx context.Context, stored []activity.Event) {
	for _, e := range stored {
		if e.Seq == 0 {
			continue
		}
		if err := f.advance(ctx, e.WorkspaceID, e.Seq, &e); err != nil {
			// The listener catches up when the database answers again.
			f.log.WarnContext(ctx, "activity: local delivery deferred", "workspace", e.WorkspaceID, "seq", e.Seq, "err", err)
		}
	}
}

// answer tells the PublishWait callers of batch what became of their
// events (stored[i] is batch[i] as stored, Seq 0 if it was not).
func answer(batch []queued, stored []activity.Event) {
	for i, q := range batch {
		if q.numbered != nil {
			q.numbered <- stored[i]
		}
	}
}

// retryable reports whether err may go away by itself: anything but the
// server refusing the statement or its data (SQLSTATE classes 22 data
// exception, 23 integrity, 42 syntax or access, 54 program limit). A
// server shutting down (57P01) or a lost connection (08) are retried.
func retryable(err error) bool {
	var se interface{ SQLState() string }
	if !errors.As(err, &se) || len(se.SQLState()) < 2 {
		return true
	}
	switch se.SQLState()[:2] {
	case "22", "23", "42", "54":
		return false
	}
	return true
}

// store inserts batch in one transaction (one statement for one event) and
// returns the events as numbered, one for each of batch; one found already
// stored has Seq 0 (its number is in the table, not known here).
func (f *Feed) store(ctx context.Context, batch []queued) ([]activity.Event, error) {
	epoch := activity.EpochSeq(time.Now())
	if len(batch) == 1 {
		e, err := insertOne(ctx, f.db, batch[0], epoch)
		if err != nil {
			return nil, err
		}
		return []activity.Event{e}, nil
	}
	tx, err := f.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("activity: store events: %w", err)
	}
	out := make([]activity.Event, 0, len(batch))
	for _, q := range batch {
		e, err := insertOne(ctx, tx, q, epoch)
		if err != nil {
			return nil, errors.Join(err, tx.Rollback())
		}
		out = append(out, e)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("activity: store events: commit: %w", err)
	}
	return out, nil
}

type queryRower interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// insertOne stores q (or moves it from the outbox) and returns it
// numbered, or with Seq 0 if it was stored before.
func insertOne(ctx context.Context, db queryRower, q queued, epoch int64) (activity.Event, error) {
	if q.outbox != "" {
		return moveOne(ctx, db, q.outbox, epoch)
	}
	e := q.e
	var notified string
	err := db.QueryRowContext(ctx, insert, e.WorkspaceID, epoch, q.id, q.payload).Scan(&e.Seq, &e.At, &notified)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return q.e, nil
	case err != nil:
		return activity.Event{}, fmt.Errorf("activity: store event: %w", err)
	}
	return e, nil
}

// pruneEvery: a workspace's old events are deleted when its seq crosses a
// multiple of it, which bounds the table to Keep + pruneEvery events a
// workspace.
const pruneEvery = 64

// prune deletes the events of the workspaces in stored that fell out of
// Keep. A reader behind them has been cut off for Keep events: it gets a
// gap, which its broker turns into a Resync (activity.ReasonMissed).
func (f *Feed) prune(ctx context.Context, stored []activity.Event) {
	upTo := map[string]int64{}
	for _, e := range stored {
		if e.Seq > 0 && e.Seq%pruneEvery == 0 {
			upTo[e.WorkspaceID] = e.Seq - f.keep
		}
	}
	for ws, seq := range upTo {
		if _, err := f.db.ExecContext(ctx, `DELETE FROM activity_events WHERE workspace_id = $1 AND seq <= $2`, ws, seq); err != nil {
			f.log.WarnContext(ctx, "activity: prune stored events", "workspace", ws, "err", err)
		}
	}
}
