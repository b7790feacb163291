// Package benchtest holds what the paired benchmarks share: tuttid's
// operation and its baseline run in one loop, alternating which goes
// first, and compared by their medians (the machine is shared: one stall
// would swing a mean).
package benchtest

import (
	"math"
	"slices"
	"time"
)

// Alternate runs a then b in even rounds and b then a in odd ones, so that
// neither always follows the other's leftover work (a warmer cache, the
// app-server's background writes).
func Alternate(round int, a, b func()) {
	if round%2 == 0 {
		a()
		b()
		return
	}
	b()
	a()
}

// Median is the middle of ds (the upper of the two middles of an even
// count); ds is left as it is. It is 0 for none.
func Median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// Percentile is the nearest-rank p-quantile of ds (0 < p <= 1): the
// smallest value at least p of them do not exceed. It is 0 for none.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}
