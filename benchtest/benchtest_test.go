package benchtest

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestAlternate(t *testing.T) {
	t.Parallel()
	var order []string
	for i := range 4 {
		Alternate(i, func() { order = append(order, "a") }, func() { order = append(order, "b") })
	}
	if got, want := strings.Join(order, ""), "abbaabba"; got != want {
		t.Errorf("order %q, want %q", got, want)
	}
}

func TestMedian(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   []time.Duration
		want time.Duration
	}{
		{nil, 0},
		{[]time.Duration{5}, 5},
		{[]time.Duration{9, 1, 5}, 5},
		{[]time.Duration{4, 1, 3, 2}, 3},
	} {
		in := slices.Clone(tc.in)
		if got := Median(tc.in); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", tc.in, got, tc.want)
		}
		if !slices.Equal(in, tc.in) {
			t.Errorf("Median reordered its argument: %v", tc.in)
		}
	}
}
