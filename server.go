package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"

	"tuttid/explore"
	"tuttid/instance"
	"tuttid/priority"
	"tuttid/server"
	"tuttid/store"
)

// serveCommand is `tuttid [serve]`: the server, until SIGINT or SIGTERM.
func serveCommand() command {
	return command{name: "serve", usage: "[serve] [--addr HOST:PORT] [--db FILE] [--codex-bin PATH] [flags]", setup: func(f *flags) runFunc {
		var c serveConfig
		c.addr = f.string("addr", "TUTTID_ADDR", "127.0.0.1:8080", "address to listen on")
		c.db = f.db()
		c.codexBin = f.codexBin()
		c.origins = f.string("allowed-origins", "TUTTID_ALLOWED_ORIGINS", "",
			"comma-separated host[:port] globs of more origins whose pages may change state and open a WebSocket, besides tuttid's own")
		c.hosts = f.string("allowed-hosts", "TUTTID_ALLOWED_HOSTS", "",
			"comma-separated host names (or *.example.com) requests may carry in Host besides loopback and --addr's host")
		c.token = f.secret("token", "TUTTID_TOKEN",
			"the API token, at least 128 bits (32 hex digits, 22 base64url characters); default: generated and kept in the file token beside the database")
		c.noAuth = f.bool("no-auth", "TUTTID_NO_AUTH", "no token check; only when listening on loopback")
		c.dataDir = f.string("data-dir", "TUTTID_DATA_DIR", "",
			"directory of tuttid's worktrees (worktrees/<workspace>/<session>); default: the database file's directory, or the user's data directory with PostgreSQL")
		c.maxBody = f.int64("max-body", "TUTTID_MAX_BODY", server.DefaultMaxBody, "largest request body in bytes")
		c.instanceID = f.string("instance-id", "TUTTID_INSTANCE_ID", "",
			"this instance's id among those sharing a PostgreSQL database; default: the host name and the port of --addr")
		c.advertiseURL = f.string("advertise-url", "TUTTID_ADVERTISE_URL", "",
			"the base URL at which the other instances reach this one; default: http:// and --addr")
		c.maxTurns = f.int64("max-concurrent-turns", "TUTTID_MAX_CONCURRENT_TURNS", explore.DefaultMaxConcurrentTurns,
			"turns running at once on this instance's Codex past which an exploration's branches wait in a queue; 0: no bound")
		c.agentNice = f.int64("agent-nice", "TUTTID_AGENT_NICE", priority.DefaultAgentNice,
			"nice value (0-19) of the agent's work: Codex and the commands it runs, Explore's checks, worktree setups; 0: tuttid's own")
		c.log = f.log("info")
		return c.run
	}}
}

type serveConfig struct {
	addr, db, codexBin, origins, hosts, token *string
	instanceID, advertiseURL, dataDir         *string
	noAuth                                    *bool
	maxBody, maxTurns, agentNice              *int64
	log                                       logFlags
}

func (c serveConfig) run(ctx context.Context, out stdio, args []string) error {
	if len(args) > 0 {
		return usageError{error: fmt.Errorf("unexpected argument %q", args[0])}
	}
	log, err := c.log.logger(out.stderr)
	if err != nil {
		return err
	}
	if *c.maxBody <= 0 {
		return usageError{error: fmt.Errorf("--max-body must be positive")}
	}
	if *c.maxTurns < 0 || *c.maxTurns > 1000 {
		return usageError{error: fmt.Errorf("--max-concurrent-turns must be from 0 (no bound) to 1000")}
	}
	if *c.agentNice < 0 || *c.agentNice > priority.MaxNice {
		return usageError{error: fmt.Errorf("--agent-nice must be from 0 (tuttid's own priority) to %d", priority.MaxNice)}
	}
	maxTurns := int(*c.maxTurns)
	if maxTurns == 0 {
		maxTurns = -1 // server.Config: below 0 is no bound
	}
	if *c.noAuth {
		if err := server.CheckNoAuth(*c.addr); err != nil {
			return err
		}
	}
	if *c.advertiseURL != "" {
		if err := instance.CheckAdvertiseURL(*c.advertiseURL); err != nil {
			return usageError{error: fmt.Errorf("--advertise-url: %w", err)}
		}
	}
	tok := *c.token
	if !*c.noAuth && tok == "" {
		if tok, err = server.LoadOrCreateToken(server.TokenFile(tokenBeside(*c.db))); err != nil {
			return err
		}
	}
	srv, err := server.New(ctx, server.Config{
		DBPath: *c.db, CodexBin: *c.codexBin, Addr: *c.addr, AllowedHosts: splitList(*c.hosts), AllowedOrigins: splitList(*c.origins),
		Token: tok, NoAuth: *c.noAuth, MaxBody: *c.maxBody, Logger: log, Version: version,
		InstanceID: *c.instanceID, AdvertiseURL: *c.advertiseURL,
		DataDir: *c.dataDir, MaxConcurrentTurns: maxTurns, AgentNice: int(*c.agentNice), CrashAt: os.Getenv("TUTTID_CRASH_AT"),
	})
	if err != nil {
		return err
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", *c.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", *c.addr, err)
	}
	base := "http://" + ln.Addr().String()
	if *c.advertiseURL == "" { // the port of --addr :0 is known now
		if err := srv.Instances.SetAdvertiseURL(ctx, instance.DefaultAdvertiseURL(ln.Addr().String())); err != nil {
			ln.Close()
			return err
		}
	}
	query := ""
	if !*c.noAuth {
		// As Jupyter does: opening this address is all a person does.
		query = "?token=" + url.QueryEscape(tok)
	}
	// The token is in the plain ready line only, for the person (and a
	// script that greps it): never in a log record, which may be shipped
	// elsewhere.
	log.Info("tuttid listening", "addr", ln.Addr().String(), "db", store.Redact(*c.db),
		"gui", base+"/app/", "graphiql", base+"/")
	printReady(out.stderr, base+"/app/"+query, *c.db)
	err = srv.Serve(ctx, ln)
	log.Info("tuttid stopped", "err", err)
	return err
}

// printReady tells a person, in one plain line beside the log, where to
// open the GUI and where the data lives.
func printReady(w io.Writer, gui, db string) {
	if store.IsPostgresURL(db) {
		db = store.Redact(db)
	} else if abs, err := filepath.Abs(db); err == nil {
		db = abs
	}
	fmt.Fprintf(w, "tuttid is ready: open %s (data: %s)\n", gui, db)
}

// tokenBeside is the database file the token file sits beside: the --db
// file, or for a PostgreSQL URL the default database file's place (the
// user's 0700 data directory), never a directory named after the URL.
func tokenBeside(db string) string {
	if !store.IsPostgresURL(db) {
		return db
	}
	if p, err := store.DefaultPath(); err == nil {
		return p
	}
	return db
}
