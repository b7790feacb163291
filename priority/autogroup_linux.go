package priority

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func keepAutogroups(ctx context.Context, root, nice int, log *slog.Logger) {
	if !autogroupsOn() {
		return
	}
	own, err := readAutogroup(os.Getpid())
	switch {
	case errors.Is(err, errNotAutogroup):
		// tuttid is in the kernel's first session's group (own.id ""):
		// the sessions the agent starts still get autogroups of their own.
	case err != nil:
		log.DebugContext(ctx, "priority: no autogroup of our own; the agent's sessions keep theirs", "err", err)
		return
	}
	done := map[string]bool{} // the sessions at nice already, by autogroup
	reported := false
	tick := time.NewTicker(keepInterval)
	defer tick.Stop()
	for first := true; ; first = false {
		if !first {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", root)); err != nil {
			return // root is gone
		}
		seen := map[string]bool{}
		for _, pid := range append([]int{root}, descendants(root)...) {
			g, err := readAutogroup(pid)
			if err != nil || g.id == own.id {
				continue // ended, in tuttid's session (its own nice value counts there) or in the first session's group
			}
			seen[g.id] = true
			if done[g.id] {
				continue
			}
			if g.nice >= nice {
				done[g.id] = true
				continue
			}
			switch err := writeAutogroup(pid, nice); {
			case err == nil:
				done[g.id] = true
			case errors.Is(err, syscall.EAGAIN):
				// The kernel's rate limit: the next tick tries again.
			case !reported:
				// Another process of the session may allow it (this one
				// may not be dumpable: its /proc files are root's).
				reported = true
				log.DebugContext(ctx, "priority: an agent's session keeps its CPU share", "pid", pid, "err", err)
			}
		}
		for id := range done {
			if !seen[id] {
				delete(done, id)
			}
		}
	}
}

// autogroupsOn: the kernel schedules by autogroup.
func autogroupsOn() bool {
	b, err := os.ReadFile("/proc/sys/kernel/sched_autogroup_enabled")
	return err == nil && strings.TrimSpace(string(b)) == "1"
}

// autogroup is a session's scheduling group as /proc/PID/autogroup says:
// "/autogroup-85632 nice 0".
type autogroup struct {
	id   string
	nice int
}

func readAutogroup(pid int) (autogroup, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/autogroup", pid))
	if err != nil {
		return autogroup{}, err
	}
	return parseAutogroup(string(b))
}

// errNotAutogroup: /proc/PID/autogroup is empty. The process's session
// has no autogroup: it is the kernel's first (no process between init and
// it started a session, as under a container's or a CI runner's init),
// whose tasks are scheduled one by one at the top level. A session started
// below it (setsid) gets an autogroup like any other.
var errNotAutogroup = errors.New("priority: the session has no autogroup (the kernel's first)")

func parseAutogroup(s string) (autogroup, error) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return autogroup{}, errNotAutogroup
	}
	if len(f) != 3 || f[1] != "nice" {
		return autogroup{}, fmt.Errorf("priority: autogroup %q: not \"/autogroup-N nice V\"", s)
	}
	n, err := strconv.Atoi(f[2])
	if err != nil {
		return autogroup{}, fmt.Errorf("priority: autogroup %q: %w", s, err)
	}
	return autogroup{id: f[0], nice: n}, nil
}

func writeAutogroup(pid, nice int) error {
	f, err := os.OpenFile(fmt.Sprintf("/proc/%d/autogroup", pid), os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(strconv.Itoa(nice))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// maxDescendants bounds one walk (a fork bomb under root stays a bounded
// walk).
const maxDescendants = 4096

// descendants are root's children, theirs, and so on, as their threads'
// /proc children files list them (a process's children are listed by the
// thread that started them).
func descendants(root int) []int {
	var out []int
	queue := []int{root}
	for len(queue) > 0 && len(out) < maxDescendants {
		pid := queue[0]
		queue = queue[1:]
		tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		if err != nil {
			continue
		}
		for _, t := range tasks {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, t.Name()))
			if err != nil {
				continue
			}
			for _, f := range strings.Fields(string(b)) {
				if c, err := strconv.Atoi(f); err == nil {
					out = append(out, c)
					queue = append(queue, c)
				}
			}
		}
	}
	return out
}
