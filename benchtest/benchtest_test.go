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

func TestPercentile(t *testing.T) {
	t.Parallel()
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(100 - i) // 100 … 1, unsorted
	}
	for _, tc := range []struct {
		in   []time.Duration
		p    float64
		want time.Duration
	}{
		{nil, 0.99, 0},
		{[]time.Duration{7}, 0.99, 7},
		{hundred, 0.99, 99},
		{hundred, 1, 100},
		{hundred, 0.5, 50},
		{[]time.Duration{3, 1, 2}, 0.01, 1},
	} {
		in := slices.Clone(tc.in)
		if got := Percentile(tc.in, tc.p); got != tc.want {
			t.Errorf("Percentile(%d values, %v) = %v, want %v", len(tc.in), tc.p, got, tc.want)
		}
		if !slices.Equal(in, tc.in) {
			t.Errorf("Percentile reordered its argument")
		}
	}
}
