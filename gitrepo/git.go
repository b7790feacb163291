package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"

	"tuttid/gitfile"
	"tuttid/priority"
)

// Config configures the git binary and its environment.
type Config struct {
	// Bin is the git executable; "git" (looked up in PATH) when empty.
	Bin string
	// Env is the base environment of every git call; os.Environ() when nil.
	// Every GIT_* variable in it is dropped (a GIT_DIR or GIT_INDEX_FILE of
	// tuttid's own environment must not redirect a call).
	Env []string
	// Logger gets what fails in the background (a kept index's refresh);
	// slog.Default() when nil.
	Logger *slog.Logger
	// Nice is every call's nice value (priority.Prefixed: through nice(1);
	// without it, tuttid's priority); 0 keeps tuttid's. tuttid gives its
	// git the agent's (--agent-nice): git on the branches' files (a turn's
	// checkpoint, the change counts an exploration ranks by) was the
	// largest share of the CPU at the person's priority with eight
	// branches running, and took it from the browser showing them.
	Nice int
	// Checkouts bounds the worktree checkouts (CreateWorktree's file
	// writing) that run at once in one repository; 0: runtime.NumCPU().
	Checkouts int
}

// Git runs git for tuttid. It is safe for concurrent use.
type Git struct {
	bin string
	// line is how a call starts, before the safety arguments: bin, or
	// nice(1) and bin (Config.Nice).
	line []string
	env  []string
	log  *slog.Logger

	mu sync.Mutex
	// refreshing holds, by kept index path, the background refreshes
	// running (snapshot_direct.go), closed when each ends.
	refreshing map[string]chan struct{}
	// keepMu: a kept index and the files beside it are replaced (keep) and
	// read (prepareIndex) one at a time.
	keepMu sync.Mutex
	// worktreeMus holds a *sync.Mutex by repository common directory
	// (runWorktreeAdmin).
	worktreeMus sync.Map
	// checkouts holds a chan struct{} of checkoutSlots by repository
	// common directory (checkoutSlot).
	checkouts     sync.Map
	checkoutSlots int
	// diffs: changed-file lists between two object ids (diffcache.go).
	diffs diffCache
}

// worktreeLock holds the repository's worktree admin lock until the
// returned func is called.
func (g *Git) worktreeLock(commonDir string) (unlock func()) {
	v, _ := g.worktreeMus.LoadOrStore(commonDir, &sync.Mutex{})
	m := v.(*sync.Mutex)
	m.Lock()
	return m.Unlock
}

// New returns a Git for cfg.
func New(cfg Config) *Git {
	bin := cfg.Bin
	if bin == "" {
		bin = "git"
	}
	base := cfg.Env
	if base == nil {
		base = os.Environ()
	}
	env := make([]string, 0, len(base)+8)
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "GIT_"), name == "LC_ALL", name == "LANGUAGE":
			continue
		}
		env = append(env, kv)
	}
	env = append(env,
		// English messages: "not a git repository" is recognised by its text.
		"LC_ALL=C",
		"GIT_TERMINAL_PROMPT=0",
		// git status and diff must never refresh the user's index.
		"GIT_OPTIONAL_LOCKS=0",
		"GIT_AUTHOR_NAME="+gitfile.IdentityName,
		"GIT_AUTHOR_EMAIL="+gitfile.IdentityEmail,
		"GIT_COMMITTER_NAME="+gitfile.IdentityName,
		"GIT_COMMITTER_EMAIL="+gitfile.IdentityEmail,
	)
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	line, _ := priority.Prefixed(cfg.Nice, []string{bin})
	slots := cfg.Checkouts
	if slots <= 0 {
		slots = max(runtime.NumCPU(), 1)
	}
	return &Git{bin: bin, line: line, env: env, log: log, refreshing: map[string]chan struct{}{}, diffs: newDiffCache(),
		checkoutSlots: slots}
}

// safetyArgs go before every subcommand: no hooks (nor the fsmonitor hook,
// a program of the repository's choosing), no signing prompt, no reflogs
// for tuttid's refs, no automatic gc or maintenance in the user's repository.
var safetyArgs = []string{
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.fsmonitor=false",
	"-c", "commit.gpgSign=false",
	"-c", "core.logAllRefUpdates=false",
	"-c", "gc.auto=0",
	"-c", "maintenance.auto=false",
	"-c", "advice.detachedHead=false",
	// A split index would make git write sharedindex files into the
	// user's git directory when it writes one of tuttid's indexes.
	"-c", "core.splitIndex=false",
}

// call is one git invocation.
type call struct {
	dir   string   // working directory
	env   []string // added to the base environment
	stdin io.Reader
	// limit > 0 bounds the standard output kept; more sets truncated.
	limit int
}

type result struct {
	stdout    []byte
	truncated bool
}

// run runs git args in c.dir and returns its standard output; a non-zero
// exit is a *CommandError.
func (g *Git) run(ctx context.Context, c call, args ...string) ([]byte, error) {
	r, err := g.runResult(ctx, c, args...)
	return r.stdout, err
}

func (g *Git) runResult(ctx context.Context, c call, args ...string) (result, error) {
	full := slices.Concat(g.line[1:], safetyArgs, args)
	cmd := exec.CommandContext(ctx, g.line[0], full...)
	cmd.Dir = c.dir
	cmd.Env = append(append([]string(nil), g.env...), c.env...)
	cmd.Stdin = c.stdin
	stdout := limitedBuffer{limit: c.limit, stop: true}
	var stderr limitedBuffer
	stderr.limit = 64 << 10
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	err := cmd.Run()
	res := result{stdout: stdout.buf.Bytes(), truncated: stdout.truncated}
	if stdout.truncated && ctx.Err() == nil {
		// The output was cut on purpose: git, its pipe closed, was
		// stopped by SIGPIPE rather than left to write the rest.
		return res, nil
	}
	if err != nil {
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		code := -1
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		}
		return res, &CommandError{Args: args, ExitCode: code, Stderr: stderr.buf.String(), Err: err}
	}
	return res, nil
}

// limitedBuffer keeps the first limit bytes written (all when limit is
// 0). Past it, with stop, the write fails, which closes git's pipe: a huge
// output neither fills memory nor keeps git working for nothing; without
// stop (standard error: git must not die of a warning) the rest is
// swallowed.
type limitedBuffer struct {
	buf       bytes.Buffer
	limit     int
	stop      bool
	truncated bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if b.limit <= 0 {
		return b.buf.Write(p)
	}
	room := b.limit - b.buf.Len()
	if room >= len(p) {
		return b.buf.Write(p)
	}
	if room > 0 {
		b.buf.Write(p[:room])
	}
	b.truncated = true
	if !b.stop {
		return len(p), nil
	}
	return room, errOutputLimit
}

var errOutputLimit = errors.New("output limit reached")

// exitCode is the exit code of a *CommandError, or -1.
func exitCode(err error) int {
	var ce *CommandError
	if errors.As(err, &ce) {
		return ce.ExitCode
	}
	return -1
}

// splitZ splits NUL-terminated records.
func splitZ(out []byte) []string {
	s := string(out)
	s = strings.TrimSuffix(s, "\x00")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\x00")
}
