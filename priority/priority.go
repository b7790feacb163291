// Package priority runs the agent's work below the person's programs on
// the CPU: Codex, the commands it runs, Explore's checks, worktree setups
// and tuttid's git get a higher nice value than tuttid's own
// (--agent-nice), and so do the sessions of that work where Linux shares
// the CPU between sessions first (KeepAutogroups). Eight
// branches each running a turn and a test suite on a laptop's cores would
// otherwise take the CPU from the browser showing them: the page's frames
// and clicks wait behind `go test` (issue 32: the exploration view keeps
// every main-thread task under 100 ms with 8 live branches).
//
// A nice value lowers a process's share only while something else wants
// the CPU: alone on the machine the agent runs at full speed.
package priority

import (
	"errors"
	"fmt"
)

// MaxNice is the largest nice value (the lowest priority).
const MaxNice = 19

// DefaultAgentNice is --agent-nice's default: nice(1)'s.
const DefaultAgentNice = 10

// ErrUnsupported: this system cannot lower a process group's priority.
var ErrUnsupported = errors.New("priority: not supported on this system")

// LowerGroup gives every process of process group pgid (and the threads
// and processes they later start, which inherit it) the nice value nice,
// or tuttid's own when that is higher: the agent never runs above tuttid.
// nice 0 changes nothing. Called right after the group's leader started:
// what the leader starts later inherits the value; what it started before
// is in the group and changed with it.
func LowerGroup(pgid, nice int) error {
	if nice <= 0 {
		return nil
	}
	if nice > MaxNice {
		return fmt.Errorf("priority: nice %d is above %d", nice, MaxNice)
	}
	return lowerGroup(pgid, nice)
}
