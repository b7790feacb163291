package main

import (
	"strings"
	"testing"
)

// TestNoSecretInUsage: the token given in TUTTID_TOKEN or --token is in no
// usage text, flag error or startup refusal, which a service manager's
// journal keeps; a weak token is refused before anything starts.
func TestNoSecretInUsage(t *testing.T) {
	const secret = "weak-secret-42" // too weak: refused
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		env  string
		args []string
		code int
		want string // in stderr
	}{
		{"help", secret, []string{"--help"}, 0, "-token"},
		{"unknown flag", secret, []string{"--bogus"}, 2, "flag provided but not defined"},
		{"bad value of another flag", secret, []string{"--max-body", "x"}, 2, "invalid value"},
		{"weak token from the environment", secret, []string{"--db", dir + "/a.db", "--addr", "127.0.0.1:0"}, 1, "too weak"},
		{"weak token on the command line", "", []string{"--db", dir + "/b.db", "--addr", "127.0.0.1:0", "--token", secret}, 1, "too weak"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("TUTTID_TOKEN", tc.env)
			var stdout, stderr strings.Builder
			code := run(tc.args, &stdout, &stderr)
			if code != tc.code || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("exit %d (want %d), stderr:\n%s", code, tc.code, stderr.String())
			}
			if out := stdout.String() + stderr.String(); strings.Contains(out, secret) {
				t.Errorf("the token is printed:\n%s", out)
			}
		})
	}
}
