package jsonrpc

import (
	"math"
	"runtime/debug"
)

// DefaultMaxLineBytes bounds one line read whole when no bound is given. A
// line read whole is one reply or one message (a reply too big to hold is
// taken as a stream, CallStreamed, and is not bounded by it); the bound
// only keeps a line too big for memory from taking the process down: a
// quarter of the Go memory limit (GOMEMLIMIT) when one is set, since
// reading and decoding a line holds a few copies of it, else 1 GiB.
func DefaultMaxLineBytes() int {
	lim := debug.SetMemoryLimit(-1)
	if lim <= 0 || lim == math.MaxInt64 {
		return 1 << 30
	}
	return int(max(lim/4, 1<<20))
}
