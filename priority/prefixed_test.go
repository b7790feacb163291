package priority_test

import (
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"tuttid/priority"
)

// TestPrefixed: a command run through Prefixed reads its own nice value
// as the one asked for from its first instruction, never below tuttid's.
func TestPrefixed(t *testing.T) {
	own, err := priority.Own()
	if err != nil {
		t.Fatal(err)
	}
	argv := []string{"/bin/sh", "-c", "cut -d' ' -f19 /proc/self/stat"}
	for _, tc := range []struct {
		name string
		nice int
		want int
	}{
		{"the agent's", 7, max(7, own)},
		{"none asked for", 0, own},
		{"below tuttid's own", own - 1, own},
		{"out of range", priority.MaxNice + 1, own},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := priority.Prefixed(tc.nice, argv)
			if tc.want == own && (ok || !slices.Equal(got, argv)) {
				t.Errorf("Prefixed(%d) = %q %v, want the command as it is", tc.nice, got, ok)
			}
			out, err := exec.Command(got[0], got[1:]...).Output()
			if err != nil {
				t.Fatal(err)
			}
			if n, err := strconv.Atoi(strings.TrimSpace(string(out))); err != nil || n != tc.want {
				t.Errorf("the command's nice value = %q, want %d", out, tc.want)
			}
		})
	}
}
