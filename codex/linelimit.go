package codex

import (
	"math"
	"runtime/debug"
)

// defaultMaxLineBytes bounds one JSON-RPC line when Config.MaxLineBytes is
// unset. A line read whole is one page of history or one event (a fork's
// reply with its history is decoded as it streams in, never read whole,
// and is not bounded by it); the bound only
// keeps a line too big for memory from taking the process down: a quarter
// of the Go memory limit (GOMEMLIMIT) when one is set, since reading and
// decoding a line holds a few copies of it, else 1 GiB.
func defaultMaxLineBytes() int {
	lim := debug.SetMemoryLimit(-1)
	if lim <= 0 || lim == math.MaxInt64 {
		return 1 << 30
	}
	return int(max(lim/4, 1<<20))
}
