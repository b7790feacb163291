package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"

	"tuttid/store"
)

// flags is a command's flag set where a flag may take its default from an
// environment variable: the one way tuttid's commands read options. The
// command line wins over the environment, which wins over the default.
type flags struct {
	*flag.FlagSet
	env []envFlag
}

// envFlag is a flag that takes its default from an environment variable.
type envFlag struct {
	name, envVar string
	// secret: the value is never printed (usage text, errors).
	secret bool
}

func newFlags(name string, stderr io.Writer) *flags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return &flags{FlagSet: fs}
}

// fromEnv makes the flag just declared take its default from envVar.
func (f *flags) fromEnv(name, envVar string) {
	f.env = append(f.env, envFlag{name: name, envVar: envVar})
}

// secret declares a string flag whose value is a secret: its default is
// empty, so usage text has no value to show, and an error about it never
// quotes it (a service manager's journal keeps stderr).
func (f *flags) secret(name, envVar, usage string) *string {
	p := f.String(name, "", usage+envNote(envVar))
	f.env = append(f.env, envFlag{name: name, envVar: envVar, secret: true})
	return p
}

func (f *flags) string(name, envVar, fallback, usage string) *string {
	p := f.String(name, fallback, usage+envNote(envVar))
	f.fromEnv(name, envVar)
	return p
}

func (f *flags) bool(name, envVar, usage string) *bool {
	p := f.Bool(name, false, usage+envNote(envVar))
	f.fromEnv(name, envVar)
	return p
}

func (f *flags) int64(name, envVar string, fallback int64, usage string) *int64 {
	p := f.Int64(name, fallback, usage+envNote(envVar))
	f.fromEnv(name, envVar)
	return p
}

func envNote(envVar string) string { return " (" + envVar + ")" }

// parse sets the flags from the environment, then from args. A wrong
// value in either is a usage error.
func (f *flags) parse(args []string) error {
	for _, e := range f.env {
		v, ok := os.LookupEnv(e.envVar)
		if !ok || v == "" {
			continue
		}
		if err := f.Set(e.name, v); err != nil {
			shown := strconv.Quote(v)
			if e.secret {
				shown = "(secret)"
			}
			fmt.Fprintf(f.Output(), "%s=%s: %v\n", e.envVar, shown, err)
			return usageError{error: fmt.Errorf("%s: %w", e.envVar, err), printed: true}
		}
	}
	return f.parseArgs(args)
}

// parseArgs parses args alone (the environment is read once, by parse).
func (f *flags) parseArgs(args []string) error {
	if err := f.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{error: err, printed: true}
	}
	return nil
}

// The flags the server and its subcommands share.

func (f *flags) db() *string {
	fallback, err := store.DefaultPath()
	if err != nil {
		fallback = "tuttid.db"
	}
	return f.string("db", "TUTTID_DB", fallback, "SQLite database file, or a postgres:// URL")
}

func (f *flags) codexBin() *string {
	return f.string("codex-bin", "CODEX_BIN", "codex", "codex executable")
}

// logFlags are --log-level and --log-format.
type logFlags struct{ level, format *string }

func (f *flags) log(level string) logFlags {
	return logFlags{
		level: f.string("log-level", "TUTTID_LOG_LEVEL", level, "debug, info, warn or error"),
		format: f.string("log-format", "TUTTID_LOG_FORMAT", "",
			"text or json; default: text when stderr is a terminal, json otherwise"),
	}
}

// logger logs on stderr at --log-level, as --log-format says.
func (l logFlags) logger(stderr io.Writer) (*slog.Logger, error) {
	return newLogger(stderr, *l.format, *l.level, isTerminal(stderr))
}

func newLogger(w io.Writer, format, level string, terminal bool) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, usageError{error: fmt.Errorf("--log-level: %w", err)}
	}
	if format == "" {
		format = "json"
		if terminal {
			format = "text"
		}
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	}
	return nil, usageError{error: fmt.Errorf("--log-format %q is not text or json", format)}
}

// isTerminal: w is a character device (a terminal; /dev/null too, where
// the format does not matter).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
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
