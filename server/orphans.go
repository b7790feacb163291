package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"tuttid/codex"
	"tuttid/fork"
	"tuttid/store"
)

// OrphansConfig configures `tuttid orphans`: the same database and Codex
// as the server.
type OrphansConfig struct {
	DBPath   string
	DSN      string // wins over DBPath when set
	CodexBin string
	CodexEnv []string // nil inherits the environment
	Logger   *slog.Logger
	Version  string
	JSON     bool
	// StaleAfter: unfinished forks older than this are settled by clean
	// (younger ones may be in flight in a running server). Default 5 min,
	// well beyond the runtime's request timeout.
	StaleAfter time.Duration
}

// ListOrphans prints the journal's orphan threads, one a line
// (`<providerThreadId> <state> <parentAgentSessionId> <requestId>`) or as
// one JSON array. It reads the database only, beside a running server.
func ListOrphans(ctx context.Context, cfg OrphansConfig, out io.Writer) error {
	st, err := openOrphanStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	orphans, err := fork.ListOrphans(ctx, st)
	if err != nil {
		return err
	}
	return printOrphans(out, orphans, cfg.JSON)
}

// CleanOrphans archives every orphan thread with Codex's thread/archive
// (its own app-server, on the same CODEX_HOME) and records it, then prints
// the list as ListOrphans does.
func CleanOrphans(ctx context.Context, cfg OrphansConfig, out io.Writer) error {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	st, err := openOrphanStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	rt := codex.New(codex.Config{Bin: cfg.CodexBin, Env: cfg.CodexEnv, Logger: log, ClientVersion: cfg.Version})
	defer rt.Close()
	if err := rt.Launch(ctx); err != nil {
		return fmt.Errorf("start codex to archive the orphans: %w", err)
	}
	stale := cfg.StaleAfter
	if stale <= 0 {
		stale = 5 * time.Minute
	}
	svc := fork.New(fork.Config{Store: st, Runtime: rt, Logger: log})
	cleaned, cerr := svc.CleanOrphans(ctx, stale)
	log.InfoContext(ctx, "orphans archived", "count", len(cleaned))
	orphans, err := fork.ListOrphans(ctx, st)
	if err != nil {
		return err
	}
	if err := printOrphans(out, orphans, cfg.JSON); err != nil {
		return err
	}
	if cerr != nil {
		return fmt.Errorf("some orphans were not archived (run clean again): %w", cerr)
	}
	return nil
}

func openOrphanStore(ctx context.Context, cfg OrphansConfig) (*store.Store, error) {
	dsn := cfg.DSN
	if dsn == "" {
		// Listing must not create a database where there was none.
		if _, err := os.Stat(cfg.DBPath); err != nil {
			return nil, fmt.Errorf("database %s: %w", filepath.Clean(cfg.DBPath), err)
		}
		dsn = store.DSN(cfg.DBPath)
	}
	return store.OpenDSN(ctx, dsn)
}

func printOrphans(out io.Writer, orphans []fork.Orphan, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(out)
		return enc.Encode(orphans)
	}
	for _, o := range orphans {
		if _, err := fmt.Fprintf(out, "%s %s %s %s\n", o.ProviderThreadID, o.State, o.ParentAgentSessionID, o.RequestID); err != nil {
			return err
		}
	}
	return nil
}
