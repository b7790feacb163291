package priority_test

import (
	"context"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
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
		// startedFails: started says why the command runs at tuttid's.
		startedFails bool
	}{
		{"the agent's", 7, max(7, own), false},
		{"none asked for", 0, own, false},
		{"below tuttid's own", own - 1, own, false},
		{"out of range", priority.MaxNice + 1, own, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, started := priority.Prefixed(tc.nice, argv)
			if tc.want == own && !slices.Equal(got, argv) {
				t.Errorf("Prefixed(%d) = %q, want the command as it is", tc.nice, got)
			}
			cmd := exec.Command(got[0], got[1:]...)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			var out strings.Builder
			cmd.Stdout = &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			stop, err := started(context.Background(), cmd.Process.Pid, nil)
			if (err != nil) != tc.startedFails {
				t.Errorf("started: %v, want an error: %v", err, tc.startedFails)
			}
			if err := cmd.Wait(); err != nil {
				t.Fatal(err)
			}
			stop()
			if n, err := strconv.Atoi(strings.TrimSpace(out.String())); err != nil || n != tc.want {
				t.Errorf("the command's nice value = %q, want %d", out.String(), tc.want)
			}
		})
	}
}
