package priority

import (
	"context"
	"errors"
	"log/slog"
	"os/exec"
	"strconv"
	"syscall"
)

// Prefixed is how to start argv, the leader of a session of its own
// (Setsid; its process group too), at nice value nice (or tuttid's own
// when that is higher): the command line to start, and started, to call
// with the started leader's pid. The line runs argv through nice(1), so
// that it starts at that value (LowerGroup after the start leaves a moment
// in which a quick command, a check reading its own priority or a setup's
// first processes, runs at tuttid's). Without nice(1) on PATH the line is
// argv as it is and started lowers the group (LowerGroup; only then, since
// nice(1) adds to the value it finds). started also keeps the session's
// autogroup, and those of the sessions the command starts, at the value
// (KeepAutogroups) until stop is called or ctx ends. Its error says why
// the command runs at tuttid's priority (it runs all the same); a group
// gone already is none. log may be nil.
func Prefixed(nice int, argv []string) (line []string, started func(ctx context.Context, pid int, log *slog.Logger) (stop func(), err error)) {
	line, throughNice := niceLine(nice, argv)
	return line, func(ctx context.Context, pid int, log *slog.Logger) (func(), error) {
		var err error
		if !throughNice {
			if err = LowerGroup(pid, nice); errors.Is(err, syscall.ESRCH) {
				err = nil
			}
		}
		keeping, stop := context.WithCancel(ctx)
		go KeepAutogroups(keeping, pid, nice, log)
		return stop, err
	}
}

// niceLine is argv through nice(1) at nice value nice, when that is
// above tuttid's own and nice(1) is on PATH; else argv.
func niceLine(nice int, argv []string) ([]string, bool) {
	if nice <= 0 || nice > MaxNice {
		return argv, false
	}
	own, err := Own()
	if err != nil || own >= nice {
		return argv, false
	}
	bin, err := exec.LookPath("nice")
	if err != nil {
		return argv, false
	}
	return append([]string{bin, "-n", strconv.Itoa(nice - own)}, argv...), true
}
