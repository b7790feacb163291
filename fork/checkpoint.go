package fork

import (
	"context"
	"database/sql"

	"tuttid/store"
)

// SQLite checkpoints its WAL in the connection that commits, once the WAL
// passes 1,000 pages: a fork that stored 160 MB of history (80 MB of
// replies, as text and as item JSON) then copies them into the database
// file before its commit returns, about 0.6 s of a 1.5 s transaction
// (measured; the checkpoint that follows copied 41,307 pages in 0.4-1.0 s). The write lock is already released then, so the copy delays
// only the fork itself: holdCheckpoint keeps it out of the fork's commit
// and runs it right after, off the request's path.
//
// It opens a read transaction on a connection of its own before the fork's
// transaction begins: a checkpoint copies no frame past the snapshot of the
// oldest reader, so the commit's automatic checkpoint finds nothing it may
// copy. release ends the read and starts the checkpoint (PASSIVE: it waits
// for no one, and a commit elsewhere meanwhile skips its own automatic one
// while this one runs). On PostgreSQL, or when the connection cannot be
// had, it does nothing.
func (s *Service) holdCheckpoint(ctx context.Context) (release func()) {
	if s.store.Dialect() != store.SQLite {
		return func() {}
	}
	conn, err := s.store.DB.Conn(ctx)
	if err != nil {
		return func() {}
	}
	// A deferred BEGIN (the store's own transactions are IMMEDIATE, which
	// would take the write lock) and a read make the snapshot.
	var n int
	if _, err := conn.ExecContext(ctx, "BEGIN DEFERRED"); err != nil {
		conn.Close()
		return func() {}
	}
	if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM sqlite_master").Scan(&n); err != nil {
		s.endRead(ctx, conn)
		return func() {}
	}
	return func() {
		s.endRead(ctx, conn)
		go s.checkpoint(context.WithoutCancel(ctx))
	}
}

func (s *Service) endRead(ctx context.Context, conn *sql.Conn) {
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		s.log.DebugContext(ctx, "fork: ending the checkpoint hold", "err", err)
	}
	conn.Close()
}

// checkpoint copies the WAL into the database file, as the fork's commit
// would have.
func (s *Service) checkpoint(ctx context.Context) {
	if _, err := s.store.DB.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)"); err != nil {
		s.log.DebugContext(ctx, "fork: checkpoint after the child's transaction", "err", err)
	}
}
