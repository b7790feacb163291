package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"

	"tuttid/store"
)

// The flags the server and its subcommands share, with one default and
// one environment variable each.

func dbFlag(fs *flag.FlagSet) *string {
	defaultDB, err := store.DefaultPath()
	if err != nil {
		defaultDB = "tuttid.db"
	}
	return fs.String("db", env("TUTTID_DB", defaultDB), "SQLite database file (TUTTID_DB)")
}

func codexBinFlag(fs *flag.FlagSet) *string {
	return fs.String("codex-bin", env("CODEX_BIN", "codex"), "codex executable (CODEX_BIN)")
}

func logLevelFlag(fs *flag.FlagSet, fallback string) *string {
	return fs.String("log-level", env("TUTTID_LOG_LEVEL", fallback), "debug, info, warn or error (TUTTID_LOG_LEVEL)")
}

// newLogger logs JSON on stderr at a --log-level.
func newLogger(level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	return slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: l})), nil
}
