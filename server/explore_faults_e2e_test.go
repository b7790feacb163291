package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"tuttid/codex/codextest"
)

func explorePath(ws, id string) string {
	return "/v1/workspaces/" + ws + "/agent-sessions/" + id + "/explore"
}

func branches(n int, settings map[string]any) []any {
	out := make([]any, n)
	for i := range out {
		b := map[string]any{"name": fmt.Sprintf("b%d", i+1)}
		if settings != nil {
			b["settings"] = settings
		}
		out[i] = b
	}
	return out
}

// slowBranchPrompt is the branches' prompt that slowBranchTurns holds
// (gui_e2e_test.go's slowPrompt is a session's).
const slowBranchPrompt = "slowly"

// slowBranchTurns has the model hold its reply to slowBranchPrompt for
// delay (or until Codex leaves: an interrupt) and answer the rest at once.
func slowBranchTurns(m *codextest.ModelServer, delay time.Duration) {
	m.SetReply(func(r codextest.Request) codextest.Reply {
		if r.LastUserText() == slowBranchPrompt {
			return codextest.Reply{Text: "done slowly", Delay: delay}
		}
		return codextest.DefaultReply(r)
	})
}

// counts is what a refused exploration must not change.
func (h *harness) counts() (sessions, explorations int) {
	h.t.Helper()
	ctx := context.Background()
	n, err := h.srv.Store.Client.AgentSession.Query().Count(ctx)
	if err != nil {
		h.t.Fatal(err)
	}
	m, err := h.srv.Store.Client.Exploration.Query().Count(ctx)
	if err != nil {
		h.t.Fatal(err)
	}
	return n, m
}

// TestExploreRefusesBadInputAndMakesNothing: the bad input, over
// GraphQL and REST: more than 8 branches, fewer than 2, a repeated name, a
// check command over the limit, a parent outside a repository, a parent
// running a turn, a turn that does not exist: each its code, and no
// session, fork or exploration made.
func TestExploreRefusesBadInputAndMakesNothing(t *testing.T) {
	h := startServer(t, harnessOpts{})
	repo := gitRepo(t)
	ws := h.createWorkspaceAt("explore-bad", repo, "")
	parent := h.startSession(ws, "parent")
	turn1 := h.send(ws, parent.ID, "hello")
	plain := h.createWorkspace("not-a-repo")
	outside := h.startSession(plain, "outside")
	h.send(plain, outside.ID, "hello")

	base := func(ws, id string) map[string]any {
		return map[string]any{"workspaceId": ws, "agentSessionId": id, "requestId": "bad", "prompt": "go", "branches": branches(2, nil)}
	}
	tests := []struct {
		name string
		in   map[string]any
		edit func(map[string]any)
		code string
	}{
		{"nine branches", base(ws, parent.ID), func(in map[string]any) { in["branches"] = branches(9, nil) }, "invalid_input"},
		{"one branch", base(ws, parent.ID), func(in map[string]any) { in["branches"] = branches(1, nil) }, "invalid_input"},
		{"a repeated name", base(ws, parent.ID), func(in map[string]any) {
			in["branches"] = []any{map[string]any{"name": "same"}, map[string]any{"name": "same"}}
		}, "invalid_input"},
		{"a check command over 16 KiB", base(ws, parent.ID), func(in map[string]any) { in["checkCommand"] = strings.Repeat("x", 16<<10+1) }, "invalid_input"},
		{"no prompt", base(ws, parent.ID), func(in map[string]any) { delete(in, "prompt") }, "invalid_input"},
		{"an unknown turn", base(ws, parent.ID), func(in map[string]any) { in["lastTurnId"] = "no-such-turn" }, "agent.fork_turn_not_found"},
		{"a model effort Codex does not offer", base(ws, parent.ID), func(in map[string]any) {
			in["branches"] = []any{map[string]any{"name": "a"}, map[string]any{"name": "b", "settings": map[string]any{"reasoningEffort": "galactic"}}}
		}, "invalid_input"},
		{"a parent outside a repository", base(plain, outside.ID), nil, "agent.fork_not_a_repository"},
		{"a missing parent", base(ws, "missing"), nil, "agent.fork_parent_not_found"},
	}
	sessions, explorations := h.counts()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.edit != nil {
				tt.edit(tt.in)
			}
			_, _, errs := h.explore(tt.in)
			if len(errs) == 0 || errs[0].Code() != tt.code {
				t.Fatalf("exploreSession: %+v, want %s", errs, tt.code)
			}
			body := map[string]any{}
			for k, v := range tt.in {
				if k != "workspaceId" && k != "agentSessionId" {
					body[k] = v
				}
			}
			status, raw := h.post(explorePath(tt.in["workspaceId"].(string), tt.in["agentSessionId"].(string)), body)
			var e struct{ Error struct{ Code string } }
			if err := json.Unmarshal(raw, &e); err != nil || e.Error.Code != tt.code || status < 400 {
				t.Fatalf("REST: %d %s, want %s", status, raw, tt.code)
			}
		})
	}
	// A parent running a turn.
	h.model.SetReply(func(r codextest.Request) codextest.Reply {
		return codextest.Reply{Text: "slow", Delay: 3 * time.Second}
	})
	var sent struct{ SendMessage struct{ ID string } }
	h.must(`mutation($in: SendMessageInput!) { sendMessage(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": parent.ID, "text": "take your time"}}, &sent)
	in := base(ws, parent.ID)
	in["lastTurnId"] = turn1
	if _, _, errs := h.explore(in); len(errs) == 0 || errs[0].Code() != "agent.fork_session_not_idle" {
		t.Errorf("exploring a working parent: %+v, want agent.fork_session_not_idle", errs)
	}
	h.waitTurn(ws, parent.ID, sent.SendMessage.ID, "COMPLETED")
	if s, x := h.counts(); s != sessions || x != explorations {
		t.Errorf("refused explorations made something: sessions %d -> %d, explorations %d -> %d", sessions, s, explorations, x)
	}
}

// TestExploreQueuesPastTheTurnBound: with --max-concurrent-turns 1, three
// branches fork at once but one first turn runs at a time; the others are
// QUEUED with their place (1 next), and every branch's turn completes.
// Over REST: 201, then 200 with the same exploration on a replay.
func TestExploreQueuesPastTheTurnBound(t *testing.T) {
	h := startServer(t, harnessOpts{maxTurns: 1})
	repo := gitRepo(t)
	ws := h.createWorkspaceAt("explore-queue", repo, "")
	parent := h.startSession(ws, "parent")
	turn1 := h.send(ws, parent.ID, "hello")
	// Long enough that the three are forked before the first ends.
	slowBranchTurns(h.model, 3*time.Second)
	body := map[string]any{"requestId": "q-1", "lastTurnId": turn1, "prompt": slowBranchPrompt, "checkCommand": "", "branches": branches(3, nil)}
	status, raw := h.post(explorePath(ws, parent.ID), body)
	if status != 201 {
		t.Fatalf("REST explore: %d %s", status, raw)
	}
	var res struct {
		Exploration struct {
			ID       string
			State    string
			Branches []struct {
				Name, State, AgentSessionID string
				QueuePosition               int
			}
			Ranking []string
		}
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	x := res.Exploration
	// The answer comes before the forks: every branch FORKING.
	for _, b := range x.Branches {
		if b.AgentSessionID != "" || b.State != "FORKING" {
			t.Fatalf("branch %s in the answer: %s, want FORKING without a session", b.Name, raw)
		}
	}
	forked := h.forkedExploration(ws, parent.ID, x.ID)
	var running, queued []string
	positions := map[int]bool{}
	for _, b := range forked.Branches {
		if b.Session == nil {
			t.Fatalf("branch %s has no session: %+v", b.Name, b)
		}
		switch b.State {
		case "RUNNING":
			running = append(running, b.Name)
		case "QUEUED":
			queued = append(queued, b.Name)
			if b.QueuePosition != nil {
				positions[*b.QueuePosition] = true
			}
		}
	}
	if len(running) != 1 || len(queued) != 2 || !positions[1] || !positions[2] || forked.State != "RUNNING" {
		t.Fatalf("once forked with a bound of 1: running %v, queued %v (positions %v), state %s; want 1 running, 2 queued at 1 and 2\n%+v",
			running, queued, positions, forked.State, forked.Branches)
	}
	v := h.settledExploration(ws, parent.ID, x.ID)
	for _, b := range v.Branches {
		if b.State != "IDLE" || b.DurationMs <= 0 {
			t.Errorf("branch %s after settling: %+v", b.Name, b)
		}
	}
	// One at a time: no two branches' turns overlapped.
	type span struct{ from, to time.Time }
	var spans []span
	for _, b := range v.Branches {
		a, err := h.srv.Store.Client.AgentSession.Get(context.Background(), b.Session.ID)
		if err != nil {
			t.Fatal(err)
		}
		ts, err := a.QueryTurns().All(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range ts {
			if !tr.StartedAt.Before(a.CreatedAt) && tr.CompletedAt != nil {
				spans = append(spans, span{tr.StartedAt, *tr.CompletedAt})
			}
		}
	}
	if len(spans) != 3 {
		t.Fatalf("%d branch turns, want 3", len(spans))
	}
	slices.SortFunc(spans, func(a, b span) int { return a.from.Compare(b.from) })
	for i := 1; i < len(spans); i++ {
		if spans[i].from.Before(spans[i-1].to) {
			t.Errorf("branch turns overlapped under a bound of 1: %v", spans)
		}
	}
	status, again := h.post(explorePath(ws, parent.ID), body)
	if status != 200 || !strings.Contains(string(again), x.ID) {
		t.Errorf("REST replay: %d %s, want 200 with %s", status, again, x.ID)
	}
	// The OpenAPI document has the route and both answers.
	_, doc := h.get("/v1/openapi.json")
	var api struct {
		Paths map[string]map[string]struct{ Responses map[string]json.RawMessage }
	}
	if err := json.Unmarshal(doc, &api); err != nil {
		t.Fatal(err)
	}
	op, ok := api.Paths["/v1/workspaces/{workspaceID}/agent-sessions/{agentSessionID}/explore"]["post"]
	if !ok || op.Responses["201"] == nil || op.Responses["200"] == nil || op.Responses["400"] == nil || op.Responses["422"] == nil {
		t.Errorf("openapi.json's explore: %v %v", ok, op.Responses)
	}
}

// TestExploreBranchFailuresDoNotUndoTheOthers: the workspace's setup
// fails in exactly one new worktree (the first to make a marker directory),
// so one branch's fork fails (agent.fork_code_failed) and the other is
// made and runs; the exploration says which failed and why. A check that
// hangs is killed at its bound and says so.
func TestExploreBranchFailuresDoNotUndoTheOthers(t *testing.T) {
	h := startServer(t, harnessOpts{})
	repo := gitRepo(t)
	marker := t.TempDir() + "/first"
	ws := h.createWorkspaceAt("explore-fail", repo, `if mkdir '`+marker+`' 2>/dev/null; then echo the first setup fails; exit 7; fi`)
	// The setups meet at a marker outside their worktrees: they run as
	// the person (the sandbox would refuse the marker to both).
	h.must(`mutation($in: UpdateWorkspaceInput!) { updateWorkspace(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "commandSandbox": "NONE"}}, nil)
	parent := h.startSession(ws, "parent")
	turn1 := h.send(ws, parent.ID, "hello")
	x, _, errs := h.explore(map[string]any{"workspaceId": ws, "agentSessionId": parent.ID, "requestId": "f-1", "lastTurnId": turn1,
		"prompt": "go", "checkCommand": "sleep 30", "checkTimeoutSeconds": 1, "branches": branches(2, nil)})
	if len(errs) > 0 {
		t.Fatalf("exploreSession: %+v", errs)
	}
	x = h.forkedExploration(ws, parent.ID, x.ID)
	var failed, made []branchView
	for _, b := range x.Branches {
		if b.State == "FAILED" {
			failed = append(failed, b)
		} else {
			made = append(made, b)
		}
	}
	if len(failed) != 1 || len(made) != 1 {
		t.Fatalf("branches %+v, want one failed and one made", x.Branches)
	}
	f := failed[0]
	if f.Session != nil || f.ErrorCode == nil || *f.ErrorCode != "agent.fork_code_failed" || f.ErrorMessage == nil || f.Rank != nil {
		t.Errorf("the failed branch: %+v", f)
	}
	v := h.settledExploration(ws, parent.ID, x.ID)
	ok := v.branch(t, made[0].Name)
	if ok.State != "IDLE" || ok.Check == nil || ok.Check.State != "TIMED_OUT" {
		t.Errorf("the made branch after settling: %+v (check %+v), want IDLE with its hanging check TIMED_OUT", ok, ok.Check)
	}
	if len(v.Ranking) != 2 || v.Ranking[0].Name != ok.Name {
		t.Errorf("ranking %+v, want the made branch first, the failed one last", v.Ranking)
	}
	if _, errs := h.applyBranch(ws, parent.ID, x.ID, f.Name, false); len(errs) == 0 || errs[0].Code() != "invalid_input" {
		t.Errorf("applying a failed branch: %+v, want invalid_input", errs)
	}
	if _, errs := h.applyBranch(ws, parent.ID, x.ID, "nope", false); len(errs) == 0 || errs[0].Code() != "agent.exploration_not_found" {
		t.Errorf("applying an unknown branch: %+v, want agent.exploration_not_found", errs)
	}
}

func (h *harness) get(path string) (int, []byte) {
	h.t.Helper()
	resp, err := http.Get(h.url + path)
	if err != nil {
		h.t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

// TestArchiveTheOthersStopsTheirRunningChecks: a branch's check holds its
// worktree; archiving the other branches stops a check still running
// (INTERRUPTED) instead of waiting out its bound, and frees the worktree.
func TestArchiveTheOthersStopsTheirRunningChecks(t *testing.T) {
	h := startServer(t, harnessOpts{})
	repo := gitRepo(t)
	ws := h.createWorkspaceAt("explore-archive", repo, "")
	parent := h.startSession(ws, "parent")
	turn1 := h.send(ws, parent.ID, "hello")
	x, _, errs := h.explore(map[string]any{"workspaceId": ws, "agentSessionId": parent.ID, "requestId": "a-1", "lastTurnId": turn1,
		"prompt": "go", "checkCommand": "sleep 600", "checkTimeoutSeconds": 900, "branches": branches(2, nil)})
	if len(errs) > 0 {
		t.Fatalf("exploreSession: %+v", errs)
	}
	h.eventually("both checks running", time.Minute, func() bool {
		v := h.exploration(ws, parent.ID, x.ID)
		for _, b := range v.Branches {
			if b.Check == nil || b.Check.State != "RUNNING" {
				return false
			}
		}
		return true
	})
	start := time.Now()
	var out struct {
		ArchiveExplorationBranches struct {
			Archived    []string
			Exploration explorationView
		}
	}
	h.must(`mutation($in: ArchiveExplorationBranchesInput!) { archiveExplorationBranches(input: $in) {
		archived exploration { `+explorationFields+` } } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": parent.ID, "explorationId": x.ID, "keep": []string{"b1"}}}, &out)
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("archiving took %v: it waited for the check", took)
	}
	got := out.ArchiveExplorationBranches
	if !slices.Equal(got.Archived, []string{"b2"}) {
		t.Fatalf("archived %v, want b2", got.Archived)
	}
	b2 := got.Exploration.branch(t, "b2")
	if b2.State != "ARCHIVED" || b2.Check == nil || b2.Check.State != "INTERRUPTED" {
		t.Errorf("b2 after the archive: %+v, check %+v; want ARCHIVED with its check INTERRUPTED", b2, b2.Check)
	}
	if b1 := got.Exploration.branch(t, "b1"); b1.Check == nil || b1.Check.State != "RUNNING" {
		t.Errorf("b1's check %+v, want still RUNNING (kept)", b1.Check)
	}
	if _, err := os.Stat(filepath.Join(h.worktreesDir(ws), b2.Session.ID)); !os.IsNotExist(err) {
		t.Errorf("b2's worktree is still there: %v", err)
	}
}
