package server_test

import (
	"fmt"
	"strings"
	"testing"

	"tuttid/agent/agenttest"
	"tuttid/explore"
)

// TestExplorationReadsChecksWhenAsked: an exploration's read carries each
// branch's latest check and the newest explore.MaxChecksListed of them,
// newest first, their output whole, read only when asked (the view itself
// reads none: explore/checks.go); a branch's durationMs counts its own
// turns, not the history it inherited.
func TestExplorationReadsChecksWhenAsked(t *testing.T) {
	h := startServer(t, harnessOpts{runtime: agenttest.Idle()})
	const own = explore.MaxChecksListed + 5
	d := seedCostData(t, h, costSizes{explorations: 1, files: 10, inherited: 30, own: own})
	type check struct{ ID, State, Output string }
	var out struct {
		Exploration struct {
			State    string
			Branches []struct {
				Name       string
				DurationMs int64
				Check      *check
				Checks     []check
			}
		}
	}
	h.must(`query($ws: ID!, $s: ID!, $x: ID!) { exploration(workspaceId: $ws, agentSessionId: $s, explorationId: $x) {
		state branches { name durationMs check { id state output } checks { id state output } } } }`,
		map[string]any{"ws": d.ws, "s": d.parent, "x": d.explorations[0]}, &out)
	if len(out.Exploration.Branches) != 8 || out.Exploration.State != "SETTLED" {
		t.Fatalf("exploration: %+v", out.Exploration)
	}
	for _, b := range out.Exploration.Branches {
		child := d.explorations[0] + "-" + b.Name
		// Own turns are 1 minute each; the 30 inherited (30 s each) do not count.
		if b.DurationMs != own*60_000 {
			t.Errorf("%s: durationMs %d, want %d (its own turns)", b.Name, b.DurationMs, own*60_000)
		}
		if len(b.Checks) != explore.MaxChecksListed {
			t.Fatalf("%s: %d checks, want the newest %d", b.Name, len(b.Checks), explore.MaxChecksListed)
		}
		for i, c := range b.Checks {
			// Checks of turns 30..54 (c30..c54): newest first.
			if want := fmt.Sprintf("%s-c%d", child, 30+own-1-i); c.ID != want || c.State != "PASSED" || len(c.Output) < 64_000 || !strings.HasPrefix(c.Output, "xxx") {
				t.Errorf("%s: checks[%d] = %s %s (%d bytes), want %s PASSED with its output", b.Name, i, c.ID, c.State, len(c.Output), want)
			}
		}
		if b.Check == nil || *b.Check != b.Checks[0] {
			t.Errorf("%s: check %+v, want the newest (%s)", b.Name, b.Check, b.Checks[0].ID)
		}
	}
}
