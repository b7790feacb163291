package priority

import (
	"os/exec"
	"strconv"
)

// Prefixed is argv run through nice(1) so that it starts at nice value
// nice (or tuttid's own when that is higher), and true; LowerGroup, called
// after the start, leaves a moment in which a quick command (a check
// reading its own priority, the first processes of a setup) runs at
// tuttid's. It is argv as it is and false when nothing is to change or
// there is no nice(1) on PATH: then the caller lowers the group after the
// start (LowerGroup), and only then, since nice(1) adds to the value the
// process has when it runs.
func Prefixed(nice int, argv []string) ([]string, bool) {
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
