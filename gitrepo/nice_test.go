package gitrepo

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"tuttid/priority"
)

// TestGitNice runs a call through a git that writes its own nice value
// first: Config.Nice's, or tuttid's (this test's) for 0.
func TestGitNice(t *testing.T) {
	own, err := priority.Own()
	if err != nil {
		t.Fatal(err)
	}
	if own >= 7 {
		t.Fatalf("this test runs at nice %d: it shows nothing at 7", own)
	}
	for _, c := range []struct {
		nice, want int
	}{{0, own}, {7, 7}, {priority.MaxNice, priority.MaxNice}} {
		t.Run(strconv.Itoa(c.nice), func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "nice")
			bin := filepath.Join(dir, "git")
			script := "#!/bin/sh\ncut -d' ' -f19 /proc/self/stat > '" + out + "'\nexec git \"$@\"\n"
			if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			g := New(Config{Bin: bin, Nice: c.nice})
			if _, err := g.CheckVersion(context.Background()); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(string(b)); got != strconv.Itoa(c.want) {
				t.Errorf("git ran at nice %s, want %d", got, c.want)
			}
		})
	}
}
