package server_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"tuttid/codex/codextest"
)

const explorationFields = `id state checkCommand lastTurnId
  branches { name state errorCode errorMessage queuePosition rank winner filesChanged linesAdded linesDeleted tokensUsed durationMs lastTurnStatus
    session { id providerSessionId } check { state exitCode output turnId } appliedAt toldAt summary }
  ranking { name }
  winner { name }`

type explorationView struct {
	ID, State, CheckCommand, LastTurnID string
	Branches                            []branchView
	Ranking                             []struct{ Name string }
	Winner                              *struct{ Name string }
}

type branchView struct {
	Name, State                            string
	ErrorCode, ErrorMessage                *string
	QueuePosition, Rank                    *int
	Winner                                 bool
	FilesChanged, LinesAdded, LinesDeleted *int
	TokensUsed, DurationMs                 int64
	LastTurnStatus                         *string
	Session                                *struct{ ID, ProviderSessionID string }
	Check                                  *struct {
		State    string
		ExitCode *int
		Output   string
		TurnID   string
	}
	AppliedAt, ToldAt, Summary *string
}

func (v explorationView) branch(t *testing.T, name string) branchView {
	t.Helper()
	for _, b := range v.Branches {
		if b.Name == name {
			return b
		}
	}
	t.Fatalf("no branch %q in %+v", name, v.Branches)
	return branchView{}
}

func (h *harness) explore(in map[string]any) (explorationView, bool, []gqlError) {
	h.t.Helper()
	var out struct {
		ExploreSession struct {
			Exploration explorationView
			Replayed    bool
		}
	}
	errs := h.do(`mutation($in: ExploreSessionInput!) { exploreSession(input: $in) { replayed exploration { `+explorationFields+` } } }`,
		map[string]any{"in": in}, &out)
	return out.ExploreSession.Exploration, out.ExploreSession.Replayed, errs
}

func (h *harness) exploration(ws, parent, id string) explorationView {
	h.t.Helper()
	var out struct{ Exploration explorationView }
	h.must(`query($ws: ID!, $s: ID!, $x: ID!) { exploration(workspaceId: $ws, agentSessionId: $s, explorationId: $x) { `+explorationFields+` } }`,
		map[string]any{"ws": ws, "s": parent, "x": id}, &out)
	return out.Exploration
}

// forkedExploration waits until no branch of the exploration is FORKING:
// exploreSession answers before its branches fork.
func (h *harness) forkedExploration(ws, parent, id string) explorationView {
	h.t.Helper()
	var v explorationView
	h.eventually("exploration "+id+" forked", time.Minute, func() bool {
		v = h.exploration(ws, parent, id)
		return !slices.ContainsFunc(v.Branches, func(b branchView) bool { return b.State == "FORKING" })
	})
	return v
}

// settled waits until every branch is idle, failed or archived and the
// checks of the idle ones have ended.
func (h *harness) settledExploration(ws, parent, id string) explorationView {
	h.t.Helper()
	var v explorationView
	h.eventually("exploration "+id+" settled", 2*time.Minute, func() bool {
		v = h.exploration(ws, parent, id)
		if v.State != "SETTLED" {
			return false
		}
		for _, b := range v.Branches {
			// Only a completed turn gets a check.
			completed := b.LastTurnStatus != nil && *b.LastTurnStatus == "COMPLETED"
			if b.State == "IDLE" && v.CheckCommand != "" && completed && (b.Check == nil || b.Check.State == "RUNNING") {
				return false
			}
		}
		return true
	})
	return v
}

type applyBranchView struct {
	Applied     bool
	Files       []struct{ Path string }
	Conflicts   []string
	Summary     *string
	AlreadyTold bool
	Branch      struct{ Name, AppliedAt, ToldAt string }
}

func (h *harness) applyBranch(ws, parent, id, name string, tell bool) (applyBranchView, []gqlError) {
	h.t.Helper()
	var out struct{ ApplyExplorationBranch applyBranchView }
	errs := h.do(`mutation($in: ApplyExplorationBranchInput!) { applyExplorationBranch(input: $in) {
		applied files { path } conflicts summary alreadyTold branch { name appliedAt toldAt } } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": parent, "explorationId": id, "branchName": name, "tellParent": tell}}, &out)
	return out.ApplyExplorationBranch, errs
}

// TestExploreForksChecksRanksAndBringsTheWinnerBack is the story on
// the real Codex, real git and the test model server, which answers each
// branch by its model: branch "fail" writes a check script that exits 3,
// branch "pass" one that exits 0. The workspace's check runs in each
// branch's worktree after its turn; the ranking puts the passing branch
// first; applying it with tellParent brings check.sh into the parent's
// files and the summary into the parent's next model request, once
// (applying again adds nothing); archiving the others frees the failing
// branch's worktree. Events: CHECK_UPDATED and EXPLORATION_UPDATED reach a
// workspace subscription.
func TestExploreForksChecksRanksAndBringsTheWinnerBack(t *testing.T) {
	h := startServer(t, harnessOpts{})
	repo := gitRepo(t)
	ws := h.createWorkspaceAt("explore", repo, "")
	h.must(`mutation($in: UpdateWorkspaceInput!) { updateWorkspace(input: $in) { id checkCommand checkTimeoutSeconds } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "checkCommand": "sh check.sh", "checkTimeoutSeconds": 60}}, nil)
	parent := h.startSession(ws, "parent")
	turn1 := h.send(ws, parent.ID, "hello")
	h.model.SetModelReply("mock-pass", codextest.CommandThen("printf 'exit 0\\n' > check.sh", "wrote a passing check"))
	h.model.SetModelReply("mock-fail", codextest.CommandThen("printf 'echo broken; exit 3\\n' > check.sh", "wrote a failing check"))

	c := h.ws(protoTransportWS)
	sub := c.subscribe(`subscription($ws: ID!) { activity(workspaceId: $ws) { kind seq workspaceId agentSessionId at explorationId checkRun { state exitCode agentSessionId } } }`,
		map[string]any{"ws": ws})
	h.awaitLive(sub, ws)

	in := map[string]any{"workspaceId": ws, "agentSessionId": parent.ID, "requestId": "explore-1", "lastTurnId": turn1,
		"prompt": "write check.sh",
		"branches": []any{
			map[string]any{"name": "fail", "settings": map[string]any{"model": "mock-fail"}},
			map[string]any{"name": "pass", "settings": map[string]any{"model": "mock-pass"}},
		}}
	x, replayed, errs := h.explore(in)
	if len(errs) > 0 || replayed {
		t.Fatalf("exploreSession: %+v (replayed %v)", errs, replayed)
	}
	if x.CheckCommand != "sh check.sh" || x.LastTurnID != turn1 || len(x.Branches) != 2 {
		t.Fatalf("exploration = %+v", x)
	}
	// The answer comes before the forks: every branch FORKING.
	for _, b := range x.Branches {
		if b.Session != nil || b.State != "FORKING" {
			t.Fatalf("branch %s in exploreSession's answer: %+v, want FORKING without a session", b.Name, b)
		}
	}
	for _, b := range h.forkedExploration(ws, parent.ID, x.ID).Branches {
		if b.Session == nil || (b.State != "RUNNING" && b.State != "IDLE" && b.State != "QUEUED") {
			t.Fatalf("branch %s once forked: %+v, want forked and started", b.Name, b)
		}
	}
	x = h.settledExploration(ws, parent.ID, x.ID)
	pass, fail := x.branch(t, "pass"), x.branch(t, "fail")
	if pass.Check == nil || pass.Check.State != "PASSED" || pass.Check.ExitCode == nil || *pass.Check.ExitCode != 0 {
		t.Errorf("pass's check = %+v, want PASSED with exit 0", pass.Check)
	}
	if fail.Check == nil || fail.Check.State != "FAILED" || fail.Check.ExitCode == nil || *fail.Check.ExitCode != 3 ||
		!strings.Contains(fail.Check.Output, "broken") {
		t.Errorf("fail's check = %+v, want FAILED with exit 3 and its output", fail.Check)
	}
	if x.Ranking[0].Name != "pass" || pass.Rank == nil || *pass.Rank != 1 || fail.Rank == nil || *fail.Rank != 2 {
		t.Errorf("ranking %+v (pass rank %v, fail rank %v), want pass first", x.Ranking, pass.Rank, fail.Rank)
	}
	if pass.FilesChanged == nil || *pass.FilesChanged != 1 || pass.LinesAdded == nil || *pass.LinesAdded != 1 {
		t.Errorf("pass's change = %v files +%v, want 1 file, 1 line", pass.FilesChanged, pass.LinesAdded)
	}
	// Each branch ran on its own model, in its own worktree.
	for _, b := range []branchView{pass, fail} {
		reqs := h.model.RequestsFor(b.Session.ProviderSessionID)
		if len(reqs) == 0 || reqs[0].Model() != "mock-"+b.Name {
			t.Errorf("branch %s's model requests: %d, first model %q", b.Name, len(reqs), firstModel(reqs))
		}
		if got := readFile(t, filepath.Join(h.worktreesDir(ws), b.Session.ID, "check.sh")); !strings.Contains(got, "exit") {
			t.Errorf("branch %s's check.sh = %q", b.Name, got)
		}
	}
	if _, err := os.Stat(filepath.Join(repo, "check.sh")); !os.IsNotExist(err) {
		t.Fatalf("the parent's checkout got check.sh before any apply: %v", err)
	}
	// The events a GUI follows.
	var sawCheck, sawUpdate bool
	for !(sawCheck && sawUpdate) {
		r, ok, timedOut := sub.next(10 * time.Second)
		if !ok || timedOut {
			t.Fatalf("events: check %v, exploration %v; subscription ended or went quiet", sawCheck, sawUpdate)
		}
		var e struct {
			Activity struct {
				Kind, AgentSessionID string
				ExplorationID        *string
				CheckRun             *struct{ State, AgentSessionID string }
			}
		}
		if err := json.Unmarshal(r.Data, &e); err != nil {
			t.Fatal(err)
		}
		switch a := e.Activity; {
		case a.Kind == "CHECK_UPDATED" && a.CheckRun != nil && a.CheckRun.State == "PASSED" && a.AgentSessionID == pass.Session.ID:
			sawCheck = true
		case a.Kind == "EXPLORATION_UPDATED" && a.ExplorationID != nil && *a.ExplorationID == x.ID && a.AgentSessionID == parent.ID:
			sawUpdate = true
		}
	}

	// The winner back, code and conversation.
	h.must(`mutation($in: MarkExplorationWinnerInput!) { markExplorationWinner(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": parent.ID, "explorationId": x.ID, "branchName": "pass"}}, nil)
	applied, errs := h.applyBranch(ws, parent.ID, x.ID, "pass", true)
	if len(errs) > 0 || !applied.Applied || applied.Summary == nil || applied.AlreadyTold {
		t.Fatalf("apply pass: %+v %+v", applied, errs)
	}
	if got := readFile(t, filepath.Join(repo, "check.sh")); got != "exit 0\n" {
		t.Errorf("the parent's check.sh = %q", got)
	}
	summary := *applied.Summary
	for _, want := range []string{`<tuttid_branch_summary exploration="` + x.ID + `" branch="pass">`, "write check.sh", "wrote a passing check", "PASSED"} {
		if !strings.Contains(summary, want) {
			t.Errorf("summary lacks %q:\n%s", want, summary)
		}
	}
	next := h.send(ws, parent.ID, "what next?")
	// Issue 43.3: that turn only answered; the applied check.sh is not its
	// work (its diff starts from the files the apply left).
	for _, tv := range h.codeTurns(ws, parent.ID) {
		if tv.ID == next && (tv.Diff == nil || len(tv.Diff.Files) != 0) {
			t.Errorf("the parent's turn after the apply is credited with %+v, want no file", tv.Diff)
		}
	}
	reqs := h.model.RequestsFor(parent.ProviderSessionID)
	last := reqs[len(reqs)-1]
	if n := countContaining(last.UserTexts(), "<tuttid_branch_summary"); n != 1 {
		t.Errorf("the parent's next model request carries the summary %d times, want once: %q", n, last.UserTexts())
	}
	// Again: nothing added.
	again, errs := h.applyBranch(ws, parent.ID, x.ID, "pass", true)
	if len(errs) > 0 || !again.AlreadyTold || again.Summary == nil || *again.Summary != summary {
		t.Fatalf("apply pass again: %+v %+v, want alreadyTold with the same summary", again, errs)
	}
	h.send(ws, parent.ID, "and now?")
	reqs = h.model.RequestsFor(parent.ProviderSessionID)
	if n := countContaining(reqs[len(reqs)-1].UserTexts(), "<tuttid_branch_summary"); n != 1 {
		t.Errorf("after a second apply the summary is in the parent's input %d times, want once", n)
	}

	// The others archived: their worktrees freed.
	var archived struct {
		ArchiveExplorationBranches struct {
			Archived    []string
			Failed      []struct{ BranchName string }
			Exploration explorationView
		}
	}
	h.must(`mutation($in: ArchiveExplorationBranchesInput!) { archiveExplorationBranches(input: $in) {
		archived failed { branchName } exploration { `+explorationFields+` } } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": parent.ID, "explorationId": x.ID}}, &archived)
	got := archived.ArchiveExplorationBranches
	if !slices.Equal(got.Archived, []string{"fail"}) || len(got.Failed) != 0 {
		t.Fatalf("archived %v, failed %+v; want fail archived (pass is the winner)", got.Archived, got.Failed)
	}
	if b := got.Exploration.branch(t, "fail"); b.State != "ARCHIVED" || b.Rank != nil {
		t.Errorf("fail after archive: %+v", b)
	}
	if _, err := os.Stat(filepath.Join(h.worktreesDir(ws), fail.Session.ID)); !os.IsNotExist(err) {
		t.Errorf("fail's worktree is still there: %v", err)
	}
	if got.Exploration.Winner == nil || got.Exploration.Winner.Name != "pass" || got.Exploration.Ranking[0].Name != "pass" {
		t.Errorf("winner %+v ranking %+v", got.Exploration.Winner, got.Exploration.Ranking)
	}

	// The same requestId again: the same exploration; other parameters: a conflict.
	x2, replayed, errs := h.explore(in)
	if len(errs) > 0 || !replayed || x2.ID != x.ID {
		t.Errorf("replay: %s replayed %v %+v, want %s", x2.ID, replayed, errs, x.ID)
	}
	in["prompt"] = "something else"
	if _, _, errs := h.explore(in); len(errs) == 0 || errs[0].Code() != "agent.fork_request_conflict" {
		t.Errorf("requestId reused with other parameters: %+v, want agent.fork_request_conflict", errs)
	}
	var listed struct {
		Session struct{ Explorations []struct{ ID string } }
	}
	h.must(`query($ws: ID!, $id: ID!) { session(workspaceId: $ws, id: $id) { explorations { id } } }`,
		map[string]any{"ws": ws, "id": parent.ID}, &listed)
	if len(listed.Session.Explorations) != 1 || listed.Session.Explorations[0].ID != x.ID {
		t.Errorf("the parent's explorations: %+v", listed.Session.Explorations)
	}
}

func firstModel(reqs []codextest.Request) string {
	if len(reqs) == 0 {
		return ""
	}
	return reqs[0].Model()
}

func countContaining(texts []string, sub string) int {
	n := 0
	for _, s := range texts {
		n += strings.Count(s, sub)
	}
	return n
}

// TestExplorationListReadsNoWorktree: the parent's list of explorations
// (the GUI reads it on every exploration event) names the branches
// without reading their worktrees; the exploration's change sizes and
// ranking read them, once a branch, and reads that follow within
// codebranch's changesFresh answer from what was read, until tuttid
// changes a worktree (Touched, as a check's end does). git is a wrapper on
// PATH that logs each call tuttid makes (not Codex's: Codex runs git status
// in a worktree on its own schedule, after a turn too).
func TestExplorationListReadsNoWorktree(t *testing.T) {
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	if err := os.WriteFile(filepath.Join(dir, "git"), []byte(fmt.Sprintf("#!/bin/sh\n[ \"$PPID\" = %d ] && echo \"$PWD $*\" >> '%s'\nexec /usr/bin/git \"$@\"\n", os.Getpid(), calls)), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	h := startServer(t, harnessOpts{})
	ws := h.createWorkspaceAt("listed", gitRepo(t), "")
	parent := h.startSession(ws, "parent")
	turn := h.send(ws, parent.ID, "hello")
	h.model.SetModelReply("mock-listed", codextest.CommandThen("printf 'x\\n' > out.txt", "wrote out.txt"))
	x, _, errs := h.explore(map[string]any{"workspaceId": ws, "agentSessionId": parent.ID, "requestId": "listed-1", "lastTurnId": turn,
		"prompt": "write out.txt", "branches": []any{
			map[string]any{"name": "a", "settings": map[string]any{"model": "mock-listed"}},
			map[string]any{"name": "b", "settings": map[string]any{"model": "mock-listed"}},
		}})
	if len(errs) > 0 {
		t.Fatalf("exploreSession: %+v", errs)
	}
	h.settledExploration(ws, parent.ID, x.ID)

	x = h.exploration(ws, parent.ID, x.ID)
	touch := func(names ...string) {
		for _, n := range names {
			h.srv.Code.Touched(x.branch(t, n).Session.ID)
		}
	}
	statusRuns := func(read func()) int {
		t.Helper()
		if err := os.Truncate(calls, 0); err != nil {
			t.Fatal(err)
		}
		read()
		b, err := os.ReadFile(calls)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(b), " status ")
	}
	var listed struct {
		Session struct {
			Explorations []struct {
				ID, State string
				Branches  []struct{ Name string }
			}
		}
	}
	touch("a", "b")
	if n := statusRuns(func() {
		h.must(`query($ws: ID!, $id: ID!) { session(workspaceId: $ws, id: $id) { explorations { id state branches { name } winner { name } } } }`,
			map[string]any{"ws": ws, "id": parent.ID}, &listed)
	}); n != 0 {
		t.Errorf("the list of explorations ran git status %d times, want 0", n)
	}
	if len(listed.Session.Explorations) != 1 || len(listed.Session.Explorations[0].Branches) != 2 {
		t.Fatalf("listed: %+v", listed)
	}
	var v explorationView
	if n := statusRuns(func() {
		v = h.exploration(ws, parent.ID, x.ID)
		h.exploration(ws, parent.ID, x.ID)
	}); n != 2 {
		t.Errorf("two reads of the exploration with its change sizes and ranking ran git status %d times, want 2 (one a branch)", n)
	}
	touch("a")
	if n := statusRuns(func() { h.exploration(ws, parent.ID, x.ID) }); n != 1 {
		t.Errorf("a read after branch a's worktree was touched ran git status %d times, want 1 (a's)", n)
	}
	for _, b := range v.Branches {
		if b.FilesChanged == nil || *b.FilesChanged != 1 || b.Rank == nil {
			t.Errorf("branch %s: %v files, rank %v; want 1 file and a rank", b.Name, b.FilesChanged, b.Rank)
		}
	}
}

// TestExploreRanksHowTheTurnEnded is issue 43's first point on the real
// Codex: the base already passes the check; one branch's model answers
// HTTP 500 (its turn FAILED, no change, 0 tokens), the other writes a file.
// The branch that did the work ranks first; the failed one after it, its
// lastTurnStatus FAILED, no check run for it. Each branch's session has
// the branch's name.
func TestExploreRanksHowTheTurnEnded(t *testing.T) {
	h := startServer(t, harnessOpts{})
	repo := gitRepo(t)
	ws := h.createWorkspaceAt("explore-outcome", repo, "")
	h.must(`mutation($in: UpdateWorkspaceInput!) { updateWorkspace(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "checkCommand": "true", "checkTimeoutSeconds": 60}}, nil)
	parent := h.startSession(ws, "parent")
	turn1 := h.send(ws, parent.ID, "hello")
	h.model.SetModelReply("mock-broken", func(codextest.Request) codextest.Reply { return codextest.Reply{Status: 500} })
	h.model.SetModelReply("mock-work", codextest.CommandThen("printf 'done\\n' > work.txt", "wrote work.txt"))
	x, _, errs := h.explore(map[string]any{"workspaceId": ws, "agentSessionId": parent.ID, "requestId": "outcome-1",
		"lastTurnId": turn1, "prompt": "do the work",
		"branches": []any{
			map[string]any{"name": "aaa-broken", "settings": map[string]any{"model": "mock-broken"}},
			map[string]any{"name": "work", "settings": map[string]any{"model": "mock-work"}},
			map[string]any{"name": "same-model"},
		}})
	if len(errs) > 0 {
		t.Fatalf("exploreSession: %+v", errs)
	}
	x = h.settledExploration(ws, parent.ID, x.ID)
	var out struct {
		Exploration struct {
			Branches []struct {
				Name              string
				Rank              *int
				LastTurnStatus    *string
				HistorySummarized bool
				Session           struct{ DisplayTitle string }
			}
			Ranking []struct{ Name string }
		}
	}
	h.must(`query($ws: ID!, $s: ID!, $x: ID!) { exploration(workspaceId: $ws, agentSessionId: $s, explorationId: $x) {
	  branches { name rank lastTurnStatus historySummarized session { displayTitle } } ranking { name } } }`,
		map[string]any{"ws": ws, "s": parent.ID, "x": x.ID}, &out)
	got := map[string]string{}
	for _, b := range out.Exploration.Branches {
		// Issue 43.2: a branch's session is known by the branch's name.
		if b.Session.DisplayTitle != b.Name {
			t.Errorf("branch %s's session is titled %q, want the branch's name", b.Name, b.Session.DisplayTitle)
		}
		if b.LastTurnStatus != nil {
			got[b.Name] = *b.LastTurnStatus
		}
		// Issue 43.4: a branch on another model than the parent's reads a
		// summary of the history (Codex compacts it first); one on the
		// parent's model does not.
		if want := b.Name != "same-model"; b.HistorySummarized != want {
			t.Errorf("branch %s's historySummarized = %v, want %v", b.Name, b.HistorySummarized, want)
		}
	}
	if got["aaa-broken"] != "FAILED" || got["work"] != "COMPLETED" {
		t.Errorf("lastTurnStatus = %v, want aaa-broken FAILED, work COMPLETED", got)
	}
	// work did the work; same-model completed with no change; the branch
	// whose turn failed comes last.
	if r := out.Exploration.Ranking; len(r) != 3 || r[0].Name != "work" || r[1].Name != "same-model" || r[2].Name != "aaa-broken" {
		t.Errorf("ranking %+v, want work, same-model, then the branch whose turn failed", r)
	}
	// A turn that failed did nothing worth checking: no check of the fork
	// point's files passes for it.
	if b := x.branch(t, "aaa-broken"); b.Check != nil {
		t.Errorf("the branch whose turn failed got a check: %+v", b.Check)
	}
	if b := x.branch(t, "work"); b.Check == nil || b.Check.State != "PASSED" {
		t.Errorf("work's check = %+v, want PASSED", b.Check)
	}
}
