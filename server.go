// Command tuttid serves coding-agent sessions on the Codex app-server, and
// their forks, over GraphQL and REST.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"tuttid/apperr"
	"tuttid/server"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	if len(os.Args) > 1 && os.Args[1] == "tree" {
		os.Exit(runTree(os.Args[2:], os.Stdout, os.Stderr))
	}
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "tuttid:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) > 0 && args[0] == "orphans" {
		return runOrphans(args[1:], os.Stdout)
	}
	fs := flag.NewFlagSet("tuttid", flag.ContinueOnError)
	addr := fs.String("addr", env("TUTTID_ADDR", "127.0.0.1:8080"), "address to listen on (TUTTID_ADDR)")
	db := dbFlag(fs)
	codexBin := codexBinFlag(fs)
	origins := fs.String("allowed-origins", env("TUTTID_ALLOWED_ORIGINS", strings.Join(server.DefaultAllowedOrigins(), ",")),
		"comma-separated host[:port] globs of more origins whose pages may change state and open a WebSocket (TUTTID_ALLOWED_ORIGINS)")
	hosts := fs.String("allowed-hosts", env("TUTTID_ALLOWED_HOSTS", ""),
		"comma-separated host names (or *.example.com) requests may carry in Host besides loopback and --addr's host (TUTTID_ALLOWED_HOSTS)")
	token := fs.String("token", env("TUTTID_TOKEN", ""),
		"the API token (TUTTID_TOKEN); default: generated and kept in the file token beside the database")
	noAuth := fs.Bool("no-auth", envBool("TUTTID_NO_AUTH"), "no token check; only when listening on loopback (TUTTID_NO_AUTH=1)")
	maxBody := fs.Int64("max-body", envInt("TUTTID_MAX_BODY", server.DefaultMaxBody), "largest request body in bytes (TUTTID_MAX_BODY)")
	logLevel := logLevelFlag(fs, "info")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	log, err := newLogger(*logLevel)
	if err != nil {
		return err
	}

	if *maxBody <= 0 {
		return fmt.Errorf("--max-body must be positive")
	}
	if *noAuth && !server.IsLoopbackAddr(*addr) {
		return fmt.Errorf("--no-auth is only allowed when listening on loopback (127.0.0.1, [::1], localhost), not on %s", *addr)
	}
	tok := *token
	if !*noAuth && tok == "" {
		if tok, err = server.LoadOrCreateToken(server.TokenFile(*db)); err != nil {
			return err
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	srv, err := server.New(ctx, server.Config{
		DBPath: *db, CodexBin: *codexBin, Addr: *addr, AllowedHosts: splitList(*hosts), AllowedOrigins: splitList(*origins),
		Token: tok, NoAuth: *noAuth, MaxBody: *maxBody, Logger: log, Version: version,
		CrashAt: os.Getenv("TUTTID_CRASH_AT"),
	})
	if err != nil {
		return err
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", *addr, err)
	}
	base := "http://" + ln.Addr().String()
	query := ""
	if !*noAuth {
		// As Jupyter does: opening this address is all a person does.
		query = "?token=" + url.QueryEscape(tok)
	}
	log.Info("tuttid listening", "addr", ln.Addr().String(), "db", *db,
		"gui", base+"/app/"+query, "graphiql", base+"/"+query)
	err = srv.Serve(ctx, ln)
	log.Info("tuttid stopped", "err", err)
	return err
}

func env(name, fallback string) string {
	if v, ok := os.LookupEnv(name); ok && v != "" {
		return v
	}
	return fallback
}

func envBool(name string) bool {
	v, err := strconv.ParseBool(env(name, "false"))
	return err == nil && v
}

func envInt(name string, fallback int64) int64 {
	if v, err := strconv.ParseInt(env(name, ""), 10, 64); err == nil {
		return v
	}
	return fallback
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// runTree is `tuttid tree`, with the server's --db (and TUTTID_DB). It
// returns the exit code: 2 for an unknown workspace or session, or a
// wrong flag; 1 for other failures.
func runTree(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tuttid tree", flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := dbFlag(fs)
	ws := fs.String("workspace", "", "workspace id (required)")
	sessionID := fs.String("session", "", "only the tree this session belongs to, from its root")
	format := fs.String("format", "text", "text, json or dot")
	archived := fs.Bool("archived", false, "include archived sessions (left out by default, with their forks)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: tuttid tree --workspace ID [--session ID] [--format text|json|dot] [--archived] [--db FILE]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "tuttid tree: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := server.PrintTree(ctx, server.TreeConfig{
		DBPath: *db, WorkspaceID: *ws, SessionID: *sessionID, Format: *format, Archived: *archived,
	}, stdout)
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "tuttid tree:", err)
	switch apperr.CodeOf(err) {
	case apperr.WorkspaceNotFound, apperr.SessionNotFound, apperr.InvalidInput:
		return 2
	}
	return 1
}
