package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"tuttid/codebranch"
	"tuttid/codex"
	"tuttid/fork"
	"tuttid/server"
	"tuttid/store"
)

// orphanStaleAfter: clean settles unfinished forks older than this (younger
// ones may be in flight in a running server); well beyond the runtime's
// request timeout.
const orphanStaleAfter = 5 * time.Minute

// orphansCommand is `tuttid orphans [--json]`, which lists the threads
// forks made but did not complete, and `tuttid orphans clean`, which
// archives them with Codex's thread/archive and records it (api-contract.md,
// "Crash safety"); with the server's --db and --codex-bin, beside a running
// server. Flags may come before and after "clean".
func orphansCommand() command {
	return command{name: "orphans", usage: "orphans [--json] [clean] [--db FILE] [--codex-bin PATH]", setup: func(f *flags) runFunc {
		c := orphansConfig{flags: f}
		c.db = f.db()
		c.codexBin = f.codexBin()
		c.dataDir = f.string("data-dir", "TUTTID_DATA_DIR", "", "the server's --data-dir (where its worktrees are)")
		c.json = f.Bool("json", false, "print one JSON array")
		c.log = f.log("warn")
		return c.run
	}}
}

type orphansConfig struct {
	flags        *flags
	db, codexBin *string
	dataDir      *string
	json         *bool
	log          logFlags
}

func (c orphansConfig) run(ctx context.Context, out stdio, args []string) error {
	clean := false
	if len(args) > 0 {
		if args[0] != "clean" {
			return usageError{error: fmt.Errorf("unknown command %q (want clean or nothing)", args[0])}
		}
		clean = true
		if err := c.flags.parseArgs(args[1:]); err != nil {
			return err
		}
		if c.flags.NArg() > 0 {
			return usageError{error: fmt.Errorf("clean: unexpected argument %q", c.flags.Arg(0))}
		}
	}
	log, err := c.log.logger(out.stderr)
	if err != nil {
		return err
	}
	// Listing must not create a database where there was none.
	st, err := store.Open(ctx, *c.db, store.MustExist)
	if err != nil {
		return fmt.Errorf("database %s: %w", store.Redact(*c.db), err)
	}
	defer st.Close()
	var cerr error
	if clean {
		// Its own app-server, on the same CODEX_HOME.
		rt := codex.New(codex.Config{Bin: *c.codexBin, Logger: log, ClientVersion: version})
		defer rt.Close()
		if err := rt.Launch(ctx); err != nil {
			return fmt.Errorf("start codex to archive the orphans: %w", err)
		}
		var cleaned []fork.Orphan
		dataDir, err := server.DataDir(*c.dataDir, *c.db)
		if err != nil {
			return err
		}
		// Worktrees of unfinished forks are removed only under this data
		// directory, and only those the journal recorded.
		code := codebranch.New(codebranch.Config{Store: st, DataDir: dataDir, Logger: log})
		cleaned, cerr = fork.New(fork.Config{Store: st, Runtime: rt, Logger: log, Code: code}).CleanOrphans(ctx, orphanStaleAfter)
		log.InfoContext(ctx, "orphans archived", "count", len(cleaned))
	}
	orphans, err := fork.ListOrphans(ctx, st)
	if err != nil {
		return err
	}
	if !*c.json && !store.IsPostgresURL(*c.db) {
		// SQLite has one instance: its lines need no instance column.
		for i := range orphans {
			orphans[i].InstanceID = ""
		}
	}
	if err := printOrphans(out.stdout, orphans, *c.json); err != nil {
		return err
	}
	if cerr != nil {
		return fmt.Errorf("some orphans were not archived (run clean again): %w", cerr)
	}
	return nil
}

// printOrphans writes one orphan a line
// (`<providerThreadId> <state> <parentAgentSessionId> <requestId>
// [<instanceId>] [<worktree>]`, the thread `-` for a pending attempt, the
// instance that made it on a database several instances share, the
// worktree it left on disk) or one JSON array.
// Every instance's are listed.
func printOrphans(out io.Writer, orphans []fork.Orphan, asJSON bool) error {
	if asJSON {
		return json.NewEncoder(out).Encode(orphans)
	}
	for _, o := range orphans {
		thread := o.ProviderThreadID
		if thread == "" {
			thread = "-" // a pending attempt: its thread, if any, is not known yet
		}
		line := fmt.Sprintf("%s %s %s %s", thread, o.State, o.ParentAgentSessionID, o.RequestID)
		if o.InstanceID != "" {
			line += " " + o.InstanceID
		}
		if o.Worktree != "" {
			line += " " + o.Worktree // a worktree the fork made, still on disk (an absolute path)
		}
		if _, err := fmt.Fprintln(out, line); err != nil {
			return err
		}
	}
	return nil
}
