// Command tuttid serves coding-agent sessions on the Codex app-server, and
// their forks, over GraphQL and REST (serve, the default), and prints
// what its database holds (tree, orphans). Each command is one file:
// its flags, its run and its output.
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
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// command is one of tuttid's commands.
type command struct {
	name  string
	usage string // the synopsis after "tuttid"
	// setup declares the command's flags; the function it returns runs the
	// command once they are parsed, with the arguments left.
	setup func(f *flags) runFunc
}

type runFunc func(ctx context.Context, out stdio, args []string) error

type stdio struct{ stdout, stderr io.Writer }

// commands is the command table; the first is the default.
func commands() []command {
	return []command{serveCommand(), treeCommand(), orphansCommand(), instancesCommand()}
}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run runs the command args name (serve when the first argument is a
// flag, or there is none) and returns the exit code: 0, 2 for a usage
// error or a missing workspace or session, 1 for any other failure.
func run(args []string, stdout, stderr io.Writer) int {
	cmds := commands()
	cmd := cmds[0]
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		i := indexCommand(cmds, args[0])
		if i < 0 {
			fmt.Fprintf(stderr, "tuttid: unknown command %q\n", args[0])
			printCommands(stderr, cmds)
			return 2
		}
		cmd, args = cmds[i], args[1:]
	}
	name := "tuttid" // the server's errors read as they always have
	if cmd.name != cmds[0].name {
		name += " " + cmd.name
	}
	f := newFlags(name, stderr)
	f.Usage = func() {
		fmt.Fprintf(stderr, "usage: tuttid %s\n", cmd.usage)
		f.PrintDefaults()
		if cmd.name == cmds[0].name {
			printCommands(stderr, cmds)
		}
	}
	exec := cmd.setup(f)
	err := f.parse(args)
	if err == nil {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		err = exec(ctx, stdio{stdout: stdout, stderr: stderr}, f.Args())
	}
	return exitCode(stderr, name, err)
}

func indexCommand(cmds []command, name string) int {
	for i, c := range cmds {
		if c.name == name {
			return i
		}
	}
	return -1
}

func printCommands(w io.Writer, cmds []command) {
	fmt.Fprintln(w, "commands:")
	for _, c := range cmds {
		fmt.Fprintf(w, "  tuttid %s\n", c.usage)
	}
}

// usageError: the command was called wrongly (exit code 2).
type usageError struct {
	error
	printed bool // the flag package has printed it, with the usage
}

func (e usageError) Unwrap() error { return e.error }

// exitCode prints err, if any, and says how tuttid exits.
func exitCode(stderr io.Writer, name string, err error) int {
	var usage usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &usage):
		if !usage.printed {
			fmt.Fprintf(stderr, "%s: %v\n", name, usage.error)
		}
		return 2
	}
	fmt.Fprintf(stderr, "%s: %v\n", name, err)
	return 1
}
