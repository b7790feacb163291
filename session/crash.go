package session

// CrashTurnStartSent is a crash point (server.Config.CrashAt): turn/start
// was written to Codex, its reply not yet read, so the turn exists only as
// the pending turn Send stored before it. Fired by the runtime (OnSent).
const CrashTurnStartSent = "turn.start_sent"

// CrashTurnCommitted is a crash point (server.Config.CrashAt): a turn's
// end and its session's READY are committed, their events not yet handed
// to the feed (on PostgreSQL they wait in the outbox, store_outbox.go).
const CrashTurnCommitted = "turn.committed"
