package webasset

import "testing"

func TestAcceptsGzip(t *testing.T) {
	tests := []struct {
		header string
		want   bool
	}{
		{"", false},
		{"gzip", true},
		{"GZIP", true},
		{"deflate, gzip;q=0.5", true},
		{"gzip;q=0", false},
		{"gzip; q=0.0, *", false},
		{"*", true},
		{"*;q=0", false},
		{"br", false},
		{"x-gzip", true},
	}
	for _, tc := range tests {
		if got := AcceptsGzip(tc.header); got != tc.want {
			t.Errorf("AcceptsGzip(%q) = %v, want %v", tc.header, got, tc.want)
		}
	}
}
