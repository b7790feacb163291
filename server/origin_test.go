package server

import (
	"net/http/httptest"
	"testing"
)

func TestOriginAllowed(t *testing.T) {
	patterns := DefaultAllowedOrigins()
	tests := []struct {
		origin string
		want   bool
	}{
		{"", true},
		{"http://127.0.0.1:8080", true}, // the server's own host
		{"http://localhost:5173", true},
		{"http://LOCALHOST", true},
		{"http://[::1]:3000", true},
		{"https://evil.example", false},
		{"http://localhost.evil.example", false},
		{"http://127.0.0.1.evil.example:80", false},
		{"null", false},
		{"::", false},
	}
	for _, tt := range tests {
		r := httptest.NewRequest("GET", "http://127.0.0.1:8080/query", nil)
		if tt.origin != "" {
			r.Header.Set("Origin", tt.origin)
		}
		if got := originAllowed(r, patterns); got != tt.want {
			t.Errorf("origin %q: allowed = %v, want %v", tt.origin, got, tt.want)
		}
	}
}
