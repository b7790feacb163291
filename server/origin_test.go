package server

import (
	"net/http/httptest"
	"testing"
)

func TestOriginAllowed(t *testing.T) {
	hosts := newHostPolicy("127.0.0.1:8080", []string{"tuttid.example.com"})
	patterns := []string{"app.example.org:*"}
	tests := []struct {
		host, origin string
		want         bool
	}{
		{"127.0.0.1:8080", "", true},
		{"127.0.0.1:8080", "http://127.0.0.1:8080", true}, // tuttid's own origin
		{"localhost:8080", "http://LOCALHOST:8080", true},
		{"[::1]:8080", "http://[::1]:8080", true},
		{"localhost", "http://localhost", true},                             // port 80 both
		{"localhost:80", "http://localhost", true},                          // the default port
		{"tuttid.example.com:8080", "http://tuttid.example.com:8080", true}, // an allowed host, its own origin
		{"127.0.0.1:8080", "https://app.example.org:8443", true},            // --allowed-origins
		{"127.0.0.1:8080", "https://app.example.org", false},                // the pattern wants a port
		// Another port of the same host is another origin (issue 22, 13).
		{"127.0.0.1:8080", "http://127.0.0.1:3000", false},
		{"localhost:8080", "http://localhost:3000", false},
		{"127.0.0.1:8080", "http://localhost:5173", false},
		{"127.0.0.1:8080", "http://[::1]:3000", false},
		{"127.0.0.1:8080", "http://localhost:8080", false},  // another host of the same port
		{"127.0.0.1:8080", "https://127.0.0.1:8080", false}, // another scheme
		{"localhost:8080", "http://localhost", false},       // port 80
		{"127.0.0.1:8080", "https://tuttid.example.com", false},
		{"127.0.0.1:8080", "https://evil.example", false},
		{"127.0.0.1:8080", "http://localhost.evil.example", false},
		{"127.0.0.1:8080", "http://127.0.0.1.evil.example:80", false},
		{"127.0.0.1:8080", "http://user@127.0.0.1:8080", false},
		{"127.0.0.1:8080", "null", false},
		{"127.0.0.1:8080", "::", false},
		// DNS rebinding: the Origin equals the request's Host, which is not enough.
		{"evil.example:8080", "http://evil.example:8080", false},
	}
	for _, tt := range tests {
		r := httptest.NewRequest("GET", "http://"+tt.host+"/query", nil)
		if tt.origin != "" {
			r.Header.Set("Origin", tt.origin)
		}
		if got := originAllowed(r, hosts, patterns); got != tt.want {
			t.Errorf("host %s origin %q: allowed = %v, want %v", tt.host, tt.origin, got, tt.want)
		}
	}
}

func TestHostPolicy(t *testing.T) {
	p := newHostPolicy("192.168.1.5:8080", []string{"tuttid.example.com", "*.dev.example", "Other.Example:9000"})
	tests := []struct {
		host string
		want bool
	}{
		{"localhost", true},
		{"localhost:8080", true},
		{"LOCALHOST.:1", true},
		{"127.0.0.1:1234", true},
		{"[::1]:8080", true},
		{"[::1]", true},
		{"192.168.1.5:8080", true}, // the host of --addr
		{"tuttid.example.com:8080", true},
		{"a.dev.example", true},
		{"a.b.dev.example:1", true},
		{"dev.example", false}, // *.x is subdomains only
		{"other.example", true},
		{"evil.example:8080", false},
		{"localhost.evil.example", false},
		{"127.0.0.2", false},
		{"", false},
		{"user@localhost", false},
		{"[::1", false},
	}
	for _, tt := range tests {
		if got := p.allows(tt.host); got != tt.want {
			t.Errorf("Host %q: allowed = %v, want %v", tt.host, got, tt.want)
		}
	}
}
