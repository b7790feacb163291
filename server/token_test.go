package server

import (
	"context"
	"encoding/base64"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadOrCreateToken(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	path := TokenFile(filepath.Join(dir, "tuttid.db"))
	if path != filepath.Join(dir, "token") {
		t.Fatalf("TokenFile = %s", path)
	}
	tok, err := LoadOrCreateToken(path)
	if err != nil {
		t.Fatal(err)
	}
	if raw, err := base64.RawURLEncoding.DecodeString(tok); err != nil || len(raw)*8 < 128 {
		t.Errorf("token %q: %d bits, %v", tok, len(raw)*8, err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", fi.Mode(), err)
	}
	again, err := LoadOrCreateToken(path)
	if err != nil || again != tok {
		t.Errorf("second start: %q, %v; want the same token", again, err)
	}
	other, _ := LoadOrCreateToken(filepath.Join(t.TempDir(), "token"))
	if other == tok {
		t.Error("two token files hold the same token")
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreateToken(path); err == nil || !strings.Contains(err.Error(), "other users") {
		t.Errorf("a token file others can read: %v", err)
	}
	short := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(short, []byte("abc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreateToken(short); err == nil {
		t.Error("a short token was accepted")
	}
}

func TestIsLoopbackAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8080": true, "[::1]:8080": true, "localhost:8080": true, "127.0.0.2:1": true,
		":8080": false, "0.0.0.0:8080": false, "[::]:8080": false, "192.168.1.5:8080": false, "example.com:80": false,
	} {
		if got := IsLoopbackAddr(addr); got != want {
			t.Errorf("IsLoopbackAddr(%q) = %v", addr, got)
		}
	}
}

// TestNoAuthOnlyOnLoopback: --no-auth is refused for a non-loopback
// address, at New and at Serve; without it a token is required.
func TestNoAuthOnlyOnLoopback(t *testing.T) {
	ctx := context.Background()
	if _, err := New(ctx, Config{DBPath: filepath.Join(t.TempDir(), "db"), NoAuth: true, Addr: "0.0.0.0:8080"}); err == nil ||
		!strings.Contains(err.Error(), "--no-auth") {
		t.Errorf("New with --no-auth on 0.0.0.0: %v", err)
	}
	if _, err := New(ctx, Config{DBPath: filepath.Join(t.TempDir(), "db"), Addr: "127.0.0.1:8080", Token: "short"}); err == nil {
		t.Error("New accepted a short token")
	}
	if _, err := New(ctx, Config{DBPath: filepath.Join(t.TempDir(), "db"), Addr: "127.0.0.1:8080"}); err == nil {
		t.Error("New ran without a token and without --no-auth")
	}
	s := &Server{noAuth: true}
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Skip(err)
	}
	defer ln.Close()
	if err := s.Serve(ctx, ln); err == nil || !strings.Contains(err.Error(), "--no-auth") {
		t.Errorf("Serve with --no-auth on %s: %v", ln.Addr(), err)
	}
}

// TestCheckToken: a token needs 128 bits, counted from its length in the
// smallest alphabet that holds it, and at least 8 different characters;
// the refusal never repeats the token.
func TestCheckToken(t *testing.T) {
	for _, tc := range []struct {
		name, token string
		ok          bool
	}{
		{"32 hex digits", "0123456789abcdef0123456789abcdef", true},
		{"31 hex digits", "0123456789abcdef0123456789abcde", false},
		{"22 base64url", "Zm9vYmFyYmF6cXV4LW_xyz", true},
		{"21 base64url", "Zm9vYmFyYmF6cXV4LW_xy", false},
		{"16 characters (the old minimum)", "abcdefghijklmnop", false},
		{"20 printable", "a!b@c#d$e%f^g&h*i(j)", true},
		{"19 printable", "a!b@c#d$e%f^g&h*i(j", false},
		{"generated (43 base64url)", "dGhpcyBpcyBhIDMyIGJ5dGUgdG9rZW4gZm9yIHRlc3Q", true},
		{"one character repeated", strings.Repeat("x", 64), false},
		{"seven characters", strings.Repeat("abcdefg", 8), false},
		{"a space", "0123456789abcdef 0123456789abcdef", false},
		{"non-ASCII", "0123456789abcdef0123456789abcdeé", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckToken(tc.token)
			if (err == nil) != tc.ok {
				t.Fatalf("CheckToken(%q) = %v, want ok %v", tc.token, err, tc.ok)
			}
			if err != nil && strings.Contains(err.Error(), tc.token) {
				t.Errorf("the refusal holds the token: %v", err)
			}
		})
	}
}

// TestTokenFileOthersControl: a token file another user owns (they chose
// its token), or one its group may write, is refused with a message that
// says why; the running user's 0600 file is used (issue 22, 17).
func TestTokenFileOthersControl(t *testing.T) {
	const tok = "0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		name   string
		mode   os.FileMode
		owner  int // -1: the running user
		reason string
	}{
		{"own and private", 0o600, -1, ""},
		{"another user's", 0o600, 65534, "belongs to another user"},
		{"group writable", 0o620, -1, "can be written by other users"},
		{"world writable", 0o602, -1, "can be written by other users"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.owner >= 0 && os.Geteuid() != 0 {
				t.Skip("giving a file to another user needs root")
			}
			path := filepath.Join(t.TempDir(), "token")
			if err := os.WriteFile(path, []byte(tok+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, tc.mode); err != nil {
				t.Fatal(err)
			}
			if tc.owner >= 0 {
				if err := os.Chown(path, tc.owner, tc.owner); err != nil {
					t.Fatal(err)
				}
			}
			got, err := LoadOrCreateToken(path)
			if tc.reason == "" {
				if err != nil || got != tok {
					t.Fatalf("LoadOrCreateToken = %q, %v", got, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.reason) || !strings.Contains(err.Error(), path) || strings.Contains(err.Error(), tok) {
				t.Errorf("LoadOrCreateToken = %q, %v; want a refusal saying %q", got, err, tc.reason)
			}
		})
	}
}
