package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"tuttid/server"
)

// runOrphans is `tuttid orphans [--json]` and `tuttid orphans clean`,
// with the server's --db and --codex-bin (and their environment).
func runOrphans(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("tuttid orphans", flag.ContinueOnError)
	db := dbFlag(fs)
	codexBin := codexBinFlag(fs)
	asJSON := fs.Bool("json", false, "print one JSON array")
	logLevel := logLevelFlag(fs, "warn")
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
	log, err := newLogger(*logLevel)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg := server.OrphansConfig{DBPath: *db, CodexBin: *codexBin, Logger: log, Version: version, JSON: *asJSON}
	if clean {
		return server.CleanOrphans(ctx, cfg, stdout)
	}
	return server.ListOrphans(ctx, cfg, stdout)
}
