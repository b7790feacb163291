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
// every instance of the database must see every event in one order.
func newFeed(ctx context.Context, db string, st *store.Store, log *slog.Logger) (activity.Feed, error) {
	if !store.IsPostgresURL(db) {
		return activity.New(activity.Options{Logger: log, FirstSeq: activity.EpochSeq(time.Now())}), nil
	}
	f, err := pgfeed.New(ctx, pgfeed.Config{DB: st.DB, URL: db, Options: activity.Options{Logger: log}, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", store.ErrUnavailable, err)
	}
	return f, nil
}
