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
