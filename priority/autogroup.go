package priority

import (
	"context"
	"log/slog"
	"time"
)

// KeepAutogroups holds, until ctx ends, root and every process it starts
// (and theirs) at nice value nice on a Linux that schedules by autogroup
// (kernel.sched_autogroup_enabled, the default of most distributions).
// There the CPU is shared first between sessions, each with the weight of
// its autogroup's nice value (0 unless set), and a process's own nice
// value counts only inside its session. Codex runs each of the agent's
// commands in a session of its own (its Linux sandbox starts bwrap with
// --new-session): each command then has a share of the CPU equal to the
// person's whole browser, whatever nice value it inherited. A command
// tuttid starts (a check, a worktree setup) would have its nice value
// count only against tuttid, whose session as a whole shares the CPU
// equally with the browser's: those start in a session of their own
// (Setsid) and are kept too (Prefixed's started). At once and then every
// keepInterval the keeper walks root and its descendants and gives each
// session's autogroup the value nice, but for tuttid's own session
// (root's when it did not start one), never touched.
// A command quicker than keepInterval may end before it is seen. Nothing
// is done where the kernel has no autogroups. log may be nil.
func KeepAutogroups(ctx context.Context, root, nice int, log *slog.Logger) {
	if nice <= 0 || nice > MaxNice {
		return
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	keepAutogroups(ctx, root, nice, log)
}

// keepInterval is how often KeepAutogroups looks for new sessions: an
// unprivileged process may set an autogroup's nice value once per 100 ms
// (the kernel's rate limit, shared by the whole machine).
const keepInterval = 100 * time.Millisecond
