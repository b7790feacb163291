package priority

import (
	"errors"
	"os/exec"
	"strconv"
	"syscall"
)

// Prefixed is how to start argv, the leader of a process group of its
// own, at nice value nice (or tuttid's own when that is higher): the
// command line to start, and lower, to call with the started leader's
// pid. The line runs argv through nice(1), so that it starts at that
// value (LowerGroup after the start leaves a moment in which a quick
// command, a check reading its own priority or a setup's first processes,
// runs at tuttid's), and lower does nothing. Without nice(1) on PATH the
// line is argv as it is and lower lowers the group (LowerGroup; only then,
// since nice(1) adds to the value it finds). lower's error says why the
// command runs at tuttid's priority (it runs all the same); a group gone
// already is none.
func Prefixed(nice int, argv []string) (line []string, lower func(pid int) error) {
	group := func(pid int) error {
		if err := LowerGroup(pid, nice); err != nil && !errors.Is(err, syscall.ESRCH) {
			return err
		}
		return nil
	}
	if nice <= 0 || nice > MaxNice {
		return argv, group
	}
	own, err := Own()
	if err != nil || own >= nice {
		return argv, group
	}
	bin, err := exec.LookPath("nice")
	if err != nil {
		return argv, group
	}
	return append([]string{bin, "-n", strconv.Itoa(nice - own)}, argv...), func(int) error { return nil }
}
