package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"tuttid/server"
	"tuttid/store"
)

// runOrphans is `tuttid orphans [--json]` and `tuttid orphans clean`,
// with the server's --db and --codex-bin (and their environment).
func runOrphans(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("tuttid orphans", flag.ContinueOnError)
	defaultDB, err := store.DefaultPath()
	if err != nil {
		defaultDB = "tuttid.db"
	}
	db := fs.String("db", env("TUTTID_DB", defaultDB), "SQLite database file (TUTTID_DB)")
	codexBin := fs.String("codex-bin", env("CODEX_BIN", "codex"), "codex executable (CODEX_BIN)")
	asJSON := fs.Bool("json", false, "print one JSON array")
	logLevel := fs.String("log-level", env("TUTTID_LOG_LEVEL", "warn"), "debug, info, warn or error (TUTTID_LOG_LEVEL)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: tuttid orphans [--json] [clean] [--db FILE] [--codex-bin PATH]")
		fs.PrintDefaults()
	}
	// Flags may come before and after "clean".
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	clean := false
	if rest := fs.Args(); len(rest) > 0 {
		if rest[0] != "clean" {
			return fmt.Errorf("orphans: unknown command %q (want clean or nothing)", rest[0])
		}
		clean = true
		if err := fs.Parse(rest[1:]); err != nil {
			return err
		}
		if fs.NArg() > 0 {
			return fmt.Errorf("orphans clean: unexpected argument %q", fs.Arg(0))
		}
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg := server.OrphansConfig{DBPath: *db, CodexBin: *codexBin, Logger: log, Version: version, JSON: *asJSON}
	if clean {
		return server.CleanOrphans(ctx, cfg, stdout)
	}
	return server.ListOrphans(ctx, cfg, stdout)
}
