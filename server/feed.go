package server

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"tuttid/activity"
	"tuttid/activity/pgfeed"
	"tuttid/store"
)

// newFeed is the activity feed for the database db: the in-process broker
// for a SQLite file (one process), the shared feed on PostgreSQL, where
// every instance of the database must see every event in one order, and
// where instance's events are staged in an outbox with their changes
// (outboxOf).
func newFeed(ctx context.Context, db string, st *store.Store, instance string, log *slog.Logger) (activity.Feed, error) {
	if !store.IsPostgresURL(db) {
		return activity.New(activity.Options{Logger: log, FirstSeq: activity.EpochSeq(time.Now())}), nil
	}
	f, err := pgfeed.New(ctx, pgfeed.Config{DB: st.DB, URL: db, Instance: instance, Options: activity.Options{Logger: log}, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", store.ErrUnavailable, err)
	}
	return f, nil
}

// outboxOf is f's outbox, if it has one (the shared feed), for the
// services that stage their events with their changes; else nil.
func outboxOf(f activity.Feed) activity.Outbox {
	if o, ok := f.(activity.Outbox); ok {
		return o
	}
	return nil
}
