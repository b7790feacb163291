package priority

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestParseAutogroup(t *testing.T) {
	for _, c := range []struct {
		in      string
		want    autogroup
		wantErr bool
	}{
		{"/autogroup-85632 nice 0\n", autogroup{"/autogroup-85632", 0}, false},
		{"/autogroup-7 nice 19", autogroup{"/autogroup-7", 19}, false},
		{"/autogroup-7 nice -5\n", autogroup{"/autogroup-7", -5}, false},
		{"", autogroup{}, true}, // errNotAutogroup
		{"\n", autogroup{}, true},
		{"/autogroup-7 weight 3", autogroup{}, true},
		{"/autogroup-7 nice x", autogroup{}, true},
	} {
		got, err := parseAutogroup(c.in)
		if (err != nil) != c.wantErr || got != c.want {
			t.Errorf("parseAutogroup(%q) = %+v, %v; want %+v, error %t", c.in, got, err, c.want, c.wantErr)
		}
		if empty := strings.TrimSpace(c.in) == ""; errors.Is(err, errNotAutogroup) != empty {
			t.Errorf("parseAutogroup(%q) = %v: errNotAutogroup %t, want %t", c.in, err, !empty, empty)
		}
	}
}

// TestKeepAutogroups starts a shell (in this process's session) that
// starts a command in a session of its own, as Codex's sandbox does, and
// one in the shell's: the keeper gives the new session's autogroup the
// nice value and leaves this process's autogroup as it was; it returns
// when its context ends.
func TestKeepAutogroups(t *testing.T) {
	if !autogroupsOn() {
		t.Skip("this kernel does not schedule by autogroup (kernel.sched_autogroup_enabled): nothing to keep")
	}
	// On CI this process is in the kernel's first session, which has no
	// autogroup (own.id ""); a session started below it gets one.
	own, err := readAutogroupOrNone(syscall.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	const nice = 7
	if own.nice >= nice {
		t.Fatalf("this test's autogroup is at nice %d: it shows nothing at %d", own.nice, nice)
	}
	sh := exec.Command("/bin/sh", "-c", "setsid sleep 30 & sleep 30 & wait")
	sh.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-sh.Process.Pid, syscall.SIGKILL)
		_ = sh.Wait()
	})
	// Both children started (setsid's sleep has its own group, not the shell's).
	var kids []int
	for deadline := time.Now().Add(5 * time.Second); len(kids) < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the shell's children: %v, want two", kids)
		}
		kids = descendants(sh.Process.Pid)
	}
	t.Cleanup(func() {
		for _, k := range kids {
			_ = syscall.Kill(k, syscall.SIGKILL)
		}
	})

	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		KeepAutogroups(ctx, sh.Process.Pid, nice, slog.New(slog.NewTextHandler(io.Discard, nil)))
	}()
	var groups []autogroup
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		groups = groups[:0]
		for _, k := range kids {
			g, err := readAutogroupOrNone(k)
			if err != nil {
				t.Fatal(err)
			}
			groups = append(groups, g)
		}
		if slices.ContainsFunc(groups, func(g autogroup) bool { return g.id != own.id && g.nice == nice }) || time.Now().After(deadline) {
			break
		}
	}
	var inOwn, lowered int
	for _, g := range groups {
		switch {
		case g.id == own.id:
			inOwn++
		case g.nice == nice:
			lowered++
		}
	}
	if inOwn != 1 || lowered != 1 {
		t.Errorf("the children's autogroups: %+v (ours %+v); want one ours and one of its own at nice %d", groups, own, nice)
	}
	if now, err := readAutogroupOrNone(syscall.Getpid()); err != nil || now != own {
		t.Errorf("our own autogroup went from %+v to %+v (%v)", own, now, err)
	}
	cancel()
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Error("KeepAutogroups did not return when its context ended")
	}
}

// readAutogroupOrNone is readAutogroup with the first session's (no
// autogroup) as id "" at nice 0.
func readAutogroupOrNone(pid int) (autogroup, error) {
	g, err := readAutogroup(pid)
	if errors.Is(err, errNotAutogroup) {
		return autogroup{}, nil
	}
	return g, err
}
