package priority

import (
	"context"
	"log/slog"
	"time"
)

// KeepAutogroups holds, until ctx ends, every process that root starts
// (and theirs) at nice value nice on a Linux that schedules by autogroup
// (kernel.sched_autogroup_enabled, the default of most distributions).
// There the CPU is shared first between sessions, each with the weight of
// its autogroup's nice value (0 unless set), and a process's own nice
// value counts only inside its session. Codex runs each of the agent's
// commands in a session of its own (its Linux sandbox starts bwrap with
// --new-session): each command then has a share of the CPU equal to the
// person's whole browser, whatever nice value it inherited. Every
// keepInterval the keeper walks root's descendants and gives each new
// session's autogroup the value nice. root's own session (tuttid's) is
// never touched. A command quicker than keepInterval may end before it is
// seen. Nothing is done where the kernel has no autogroups.
func KeepAutogroups(ctx context.Context, root, nice int, log *slog.Logger) {
	if nice <= 0 || nice > MaxNice {
		return
	}
	keepAutogroups(ctx, root, nice, log)
}

// keepInterval is how often KeepAutogroups looks for new sessions: an
// unprivileged process may set an autogroup's nice value once per 100 ms
// (the kernel's rate limit, shared by the whole machine).
const keepInterval = 100 * time.Millisecond
