package server_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"tuttid/codex/codextest"
)

type stopView struct {
	Interrupted []string
	Failed      []struct{ BranchName, ErrorCode, ErrorMessage string }
	Exploration explorationView
}

func (h *harness) stopExploration(ws, parent, id string) (stopView, []gqlError) {
	h.t.Helper()
	var out struct{ StopExploration stopView }
	errs := h.do(`mutation($in: StopExplorationInput!) { stopExploration(input: $in) {
	  interrupted failed { branchName errorCode errorMessage } exploration { `+explorationFields+` } } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": parent, "explorationId": id}}, &out)
	return out.StopExploration, errs
}

// slowRequests counts the model requests of the branches' first turns.
func slowRequests(m *codextest.ModelServer) int {
	n := 0
	for _, r := range m.Requests() {
		if r.LastUserText() == slowBranchPrompt {
			n++
		}
	}
	return n
}

// TestStopExploration: a bound of one turn and a model that holds the
// branches' first replies for a minute (until Codex leaves): one branch
// runs, two queue. stopExploration interrupts the running turn (its turn
// INTERRUPTED, no check for it), stops the queued ones (STOPPED, unranked)
// and the exploration settles with stoppedAt; neither queued branch's turn
// starts afterwards, though the bound is free. A message sent to a stopped
// branch starts it, and its check runs as before. Stopping again
// interrupts nothing; an unknown exploration: agent.exploration_not_found.
func TestStopExploration(t *testing.T) {
	h := startServer(t, harnessOpts{maxTurns: 1})
	repo := gitRepo(t)
	ws := h.createWorkspaceAt("explore-stop", repo, "")
	parent := h.startSession(ws, "parent")
	turn1 := h.send(ws, parent.ID, "hello")
	slowBranchTurns(h.model, time.Minute)
	x, _, errs := h.explore(map[string]any{"workspaceId": ws, "agentSessionId": parent.ID, "requestId": "stop-1", "lastTurnId": turn1,
		"prompt": slowBranchPrompt, "checkCommand": "true", "branches": branches(3, nil)})
	if len(errs) > 0 {
		t.Fatalf("exploreSession: %+v", errs)
	}
	var running string
	h.eventually("one branch running at Codex, two queued", time.Minute, func() bool {
		v := h.exploration(ws, parent.ID, x.ID)
		var r, q []string
		for _, b := range v.Branches {
			switch b.State {
			case "RUNNING":
				r = append(r, b.Name)
			case "QUEUED":
				q = append(q, b.Name)
			}
		}
		if len(r) == 1 {
			running = r[0]
		}
		return len(r) == 1 && len(q) == 2 && slowRequests(h.model) == 1
	})

	res, errs := h.stopExploration(ws, parent.ID, x.ID)
	if len(errs) > 0 {
		t.Fatalf("stopExploration: %+v", errs)
	}
	if !slices.Equal(res.Interrupted, []string{running}) || len(res.Failed) != 0 {
		t.Fatalf("stopExploration: interrupted %v, failed %+v; want [%s], none", res.Interrupted, res.Failed, running)
	}
	var v explorationView
	h.eventually("the stopped exploration settled", time.Minute, func() bool {
		v = h.exploration(ws, parent.ID, x.ID)
		return v.State == "SETTLED"
	})
	var stopped []string
	for _, b := range v.Branches {
		switch {
		case b.Name == running:
			if b.State != "IDLE" || b.Check != nil || b.Rank == nil {
				t.Errorf("the interrupted branch: %+v, want IDLE, ranked, with no check", b)
			}
			a, err := h.srv.Store.Client.AgentSession.Get(context.Background(), b.Session.ID)
			if err != nil {
				t.Fatal(err)
			}
			ts, err := a.QueryTurns().All(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if last := ts[len(ts)-1]; last.Status != "INTERRUPTED" {
				t.Errorf("the interrupted branch's last turn: %s, want INTERRUPTED", last.Status)
			}
		case b.State == "STOPPED" && b.Rank == nil && b.Session != nil:
			stopped = append(stopped, b.Name)
		default:
			t.Errorf("a queued branch after the stop: %+v, want STOPPED, unranked, with its session", b)
		}
	}
	var stoppedAt struct{ Exploration struct{ StoppedAt *string } }
	h.must(`query($ws: ID!, $s: ID!, $x: ID!) { exploration(workspaceId: $ws, agentSessionId: $s, explorationId: $x) { stoppedAt } }`,
		map[string]any{"ws": ws, "s": parent.ID, "x": x.ID}, &stoppedAt)
	if stoppedAt.Exploration.StoppedAt == nil {
		t.Error("stoppedAt is null after the stop")
	}
	// The bound is free now: a queued branch that started would have
	// asked the model by then.
	time.Sleep(2 * time.Second)
	if n := slowRequests(h.model); n != 1 {
		t.Errorf("%d first-turn model requests after the stop, want 1 (the interrupted branch's)", n)
	}
	if v := h.exploration(ws, parent.ID, x.ID); v.branch(t, stopped[0]).State != "STOPPED" || v.branch(t, running).Check != nil {
		t.Errorf("2 s after the stop: %+v", v.Branches)
	}

	again, errs := h.stopExploration(ws, parent.ID, x.ID)
	if len(errs) > 0 || len(again.Interrupted) != 0 || len(again.Failed) != 0 || again.Exploration.State != "SETTLED" {
		t.Errorf("stopping again: %+v %+v, want nothing interrupted, settled", again, errs)
	}
	if _, errs := h.stopExploration(ws, parent.ID, "no-such-exploration"); len(errs) == 0 || errs[0].Code() != "agent.exploration_not_found" {
		t.Errorf("stopping an unknown exploration: %+v, want agent.exploration_not_found", errs)
	}

	// The person starts a stopped branch: it runs, and its check runs.
	name := stopped[0]
	h.send(ws, v.branch(t, name).Session.ID, "go on")
	h.eventually("the started branch checked", time.Minute, func() bool {
		b := h.exploration(ws, parent.ID, x.ID).branch(t, name)
		return b.State == "IDLE" && b.Check != nil && b.Check.State == "PASSED" && b.Rank != nil
	})
}

// TestStopExplorationWhileForking: the workspace's worktree setup takes
// two seconds, so the exploration is stopped while both branches are
// still forking: each fork finishes whole, and each branch is then
// STOPPED, never started (the model hears nothing from it).
func TestStopExplorationWhileForking(t *testing.T) {
	h := startServer(t, harnessOpts{})
	repo := gitRepo(t)
	ws := h.createWorkspaceAt("explore-stop-forking", repo, "sleep 2")
	parent := h.startSession(ws, "parent")
	turn1 := h.send(ws, parent.ID, "hello")
	x, _, errs := h.explore(map[string]any{"workspaceId": ws, "agentSessionId": parent.ID, "requestId": "stop-forking", "lastTurnId": turn1,
		"prompt": slowBranchPrompt, "checkCommand": "", "branches": branches(2, nil)})
	if len(errs) > 0 {
		t.Fatalf("exploreSession: %+v", errs)
	}
	res, errs := h.stopExploration(ws, parent.ID, x.ID)
	if len(errs) > 0 {
		t.Fatalf("stopExploration: %+v", errs)
	}
	forking := 0
	for _, b := range res.Exploration.Branches {
		if b.State == "FORKING" {
			forking++
		}
	}
	if forking != 2 || len(res.Interrupted) != 0 {
		t.Fatalf("the stop's answer: %+v; want both branches still forking, nothing interrupted (the setup takes 2 s)", res)
	}
	var v explorationView
	h.eventually("both forked and stopped", time.Minute, func() bool {
		v = h.exploration(ws, parent.ID, x.ID)
		return v.State == "SETTLED"
	})
	for _, b := range v.Branches {
		if b.State != "STOPPED" || b.Session == nil {
			t.Errorf("branch %s after its fork: %+v, want STOPPED with its session", b.Name, b)
		}
	}
	time.Sleep(time.Second)
	if n := slowRequests(h.model); n != 0 {
		t.Errorf("%d first-turn model requests, want none: the exploration was stopped", n)
	}
}
