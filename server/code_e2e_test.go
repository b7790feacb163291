package server_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"tuttid/codex/codextest"
	entsessioncode "tuttid/ent/sessioncode"
	"tuttid/gitrepo"
)

// Code branches on the real Codex: the agent edits files with a shell
// command, each turn's end is a checkpoint taken before READY, the turn's
// diff is its own, and the person's repository keeps its index, HEAD,
// branches and stash.

type codeDiffView struct {
	Files []struct {
		Path, Status         string
		Additions, Deletions int
	}
	Patch     string
	Truncated bool
}

type codeTurnView struct {
	ID         string
	Status     string
	Checkpoint *struct{ Commit, Head string }
	Diff       *codeDiffView
}

const codeTurnFields = `id status checkpoint { commit head createdAt } diff { files { path status additions deletions } patch truncated }`

func gitE2E(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "GIT_OPTIONAL_LOCKS=0", "GIT_AUTHOR_NAME=P", "GIT_AUTHOR_EMAIL=p@example.com",
		"GIT_COMMITTER_NAME=P", "GIT_COMMITTER_EMAIL=p@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimRight(string(out), "\n")
}

// codeRepo is a repository with a commit, a stash entry, a staged file and
// an uncommitted change, as a person's working copy looks.
func codeRepo(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.txt", "a1\na2\n")
	write("b.txt", "b1\n")
	gitE2E(t, dir, "init", "-q", "-b", "main")
	gitE2E(t, dir, "add", "-A")
	gitE2E(t, dir, "commit", "-q", "-m", "first")
	write("b.txt", "stashed\n")
	gitE2E(t, dir, "stash", "-q")
	write("staged.txt", "staged\n")
	gitE2E(t, dir, "add", "staged.txt")
	write("b.txt", "b1\nbefore the session\n")
	return dir
}

// personRepoState: stash, refs outside refs/tuttid, HEAD and the index's bytes.
func personRepoState(t *testing.T, dir string) string {
	t.Helper()
	var refs []string
	for _, l := range strings.Split(gitE2E(t, dir, "for-each-ref", "--format=%(refname) %(objectname)"), "\n") {
		if !strings.HasPrefix(l, "refs/tuttid/") {
			refs = append(refs, l)
		}
	}
	index, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join([]string{gitE2E(t, dir, "stash", "list"), strings.Join(refs, "\n"),
		gitE2E(t, dir, "symbolic-ref", "HEAD"), gitE2E(t, dir, "rev-parse", "HEAD"), string(index)}, "\n--\n")
}

func (h *harness) codeTurns(ws, id string) []codeTurnView {
	h.t.Helper()
	var out struct {
		Session struct{ Turns []codeTurnView }
	}
	h.must(`query($ws: ID!, $id: ID!) { session(workspaceId: $ws, id: $id) { turns { `+codeTurnFields+` } } }`,
		map[string]any{"ws": ws, "id": id}, &out)
	return out.Session.Turns
}

// editOnce: a message containing "edit" makes the model run cmd once in
// that turn, then answer; any other message is answered with text.
func editOnce(cmd string) func(codextest.Request) codextest.Reply {
	return func(r codextest.Request) codextest.Reply {
		if r.AfterToolCall() {
			return codextest.Reply{Text: "edited"}
		}
		if strings.Contains(r.LastUserText(), "edit") {
			return codextest.Reply{FunctionCall: &codextest.FunctionCall{Cmd: cmd}}
		}
		return codextest.Reply{Text: "nothing to do"}
	}
}

func TestTurnCheckpointsE2E(t *testing.T) {
	h := startServer(t, harnessOpts{})
	repo := codeRepo(t)
	before := personRepoState(t, repo)
	statusBefore := gitE2E(t, repo, "status", "--porcelain=v1", "--untracked-files=all")
	h.model.SetReply(editOnce("printf 'agent\\n' > agent.txt && printf 'a3\\n' >> a.txt"))
	ws := h.createWorkspaceAt("code", repo, "")
	sub := h.ws(protoTransportWS).subscribe(`subscription($ws: ID!, $s: ID, $after: Int64) {
  activity(workspaceId: $ws, agentSessionId: $s, afterSeq: $after) { kind agentSessionId turn { id status checkpoint { commit } } }
}`, activityVars(ws, "", h.publishMarker(ws)))

	var started struct {
		StartSession struct {
			ID   string
			Code *struct {
				Mode, RepositoryRoot string
				WorktreePresent      bool
				Branch               *string
				Changes              codeDiffView
			}
		}
	}
	h.must(`mutation($in: StartSessionInput!) { startSession(input: $in) { id code { mode repositoryRoot worktreePresent branch changes { files { path status } } } } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "settings": map[string]any{"permissionModeId": "full-access"}}}, &started)
	s := started.StartSession
	if s.Code == nil || s.Code.Mode != "SHARED" || s.Code.RepositoryRoot != repo || !s.Code.WorktreePresent ||
		s.Code.Branch == nil || *s.Code.Branch != "main" {
		t.Fatalf("code = %+v", s.Code)
	}
	var changed []string
	for _, f := range s.Code.Changes.Files {
		changed = append(changed, f.Status+" "+f.Path)
	}
	if !slices.Equal(changed, []string{"MODIFIED b.txt", "ADDED staged.txt"}) {
		t.Fatalf("SHARED changes against HEAD = %v", changed)
	}

	turn1 := h.send(ws, s.ID, "edit the files")
	// TURN_COMPLETED already carries the checkpoint: it was taken before.
	for {
		r, ok, timedOut := sub.next(30 * time.Second)
		if !ok || timedOut {
			t.Fatal("no TURN_COMPLETED")
		}
		var ev struct {
			Activity struct {
				Kind string
				Turn *struct {
					ID         string
					Checkpoint *struct{ Commit string }
				}
			}
		}
		if err := json.Unmarshal(r.Data, &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Activity.Kind == "TURN_COMPLETED" {
			if ev.Activity.Turn == nil || ev.Activity.Turn.ID != turn1 || ev.Activity.Turn.Checkpoint == nil {
				t.Fatalf("TURN_COMPLETED without its checkpoint: %s", r.Data)
			}
			break
		}
	}

	turns := h.codeTurns(ws, s.ID)
	t1 := turns[len(turns)-1]
	if t1.Checkpoint == nil || t1.Diff == nil || t1.Checkpoint.Head != gitE2E(t, repo, "rev-parse", "HEAD") {
		t.Fatalf("turn 1 = %+v", t1)
	}
	var files []string
	for _, f := range t1.Diff.Files {
		files = append(files, f.Status+" "+f.Path)
	}
	// The turn's own changes only: b.txt and staged.txt were there before.
	if !slices.Equal(files, []string{"MODIFIED a.txt", "ADDED agent.txt"}) || !strings.Contains(t1.Diff.Patch, "+a3") {
		t.Fatalf("turn 1 diff = %v\n%s", files, t1.Diff.Patch)
	}
	if got := gitE2E(t, repo, "rev-parse", "refs/tuttid/sessions/"+s.ID+"/turns/"+turn1); got != t1.Checkpoint.Commit {
		t.Fatalf("turn ref = %s, checkpoint %s", got, t1.Checkpoint.Commit)
	}

	// A turn that changes nothing points at the previous checkpoint.
	h.send(ws, s.ID, "just talk")
	turns = h.codeTurns(ws, s.ID)
	t2 := turns[len(turns)-1]
	if t2.Checkpoint == nil || t2.Checkpoint.Commit != t1.Checkpoint.Commit || t2.Diff == nil || len(t2.Diff.Files) != 0 {
		t.Fatalf("idle turn = %+v", t2)
	}

	// The person's repository: the agent's edits, nothing else of tuttid's.
	if after := personRepoState(t, repo); after != before {
		t.Fatalf("the person's repository changed:\n%s\n----\n%s", before, after)
	}
	status := gitE2E(t, repo, "status", "--porcelain=v1", "--untracked-files=all")
	if want := statusBefore + "\n M a.txt\n?? agent.txt"; !sameLines(status, want) {
		t.Fatalf("status = %q, want %q", status, want)
	}

	// Delete: the session's refs go.
	h.must(`mutation($in: DeleteSessionInput!) { deleteSession(input: $in) }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": s.ID}}, nil)
	if refs := gitE2E(t, repo, "for-each-ref", "refs/tuttid/"); refs != "" {
		t.Fatalf("refs left after delete: %s", refs)
	}
}

func sameLines(a, b string) bool {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}

// worktreeChild turns a SHARED fork child into what a WORKTREE fork makes
// (the fork saga's part, built beside this): a worktree from the fork
// turn's checkpoint and the child's code row naming it.
func (h *harness) worktreeChild(childID, checkpoint string, repo string) string {
	h.t.Helper()
	ctx := context.Background()
	r, err := gitrepo.New(gitrepo.Config{}).Open(ctx, repo)
	if err != nil {
		h.t.Fatal(err)
	}
	wt, err := r.CreateWorktree(ctx, gitrepo.WorktreeOptions{Checkpoint: checkpoint, Path: filepath.Join(h.t.TempDir(), "wt")})
	if err != nil {
		h.t.Fatal(err)
	}
	cp, err := r.ReadCheckpoint(ctx, checkpoint)
	if err != nil {
		h.t.Fatal(err)
	}
	c := h.srv.Store.Client
	a, err := c.AgentSession.Get(ctx, childID)
	if err != nil {
		h.t.Fatal(err)
	}
	if _, err := c.SessionCode.Delete().Where(entsessioncode.AgentSessionID(childID)).Exec(ctx); err != nil {
		h.t.Fatal(err)
	}
	if err := c.SessionCode.Create().SetAgentSessionID(childID).SetWorkspaceID(a.WorkspaceID).
		SetMode(entsessioncode.ModeWORKTREE).SetRepositoryRoot(wt.Path).SetCommonDir(r.CommonDir).
		SetWorktreePath(wt.Path).SetWorktreePresent(true).
		SetBaseCommit(cp.Commit).SetBaseHead(cp.Head).SetStartCommit(cp.Commit).Exec(ctx); err != nil {
		h.t.Fatal(err)
	}
	return wt.Path
}

type applyView struct {
	Applied   bool
	Files     []struct{ Path, Status string }
	Conflicts []string
}

func (h *harness) apply(ws, id string, dryRun bool, target string) (applyView, []gqlError) {
	h.t.Helper()
	in := map[string]any{"workspaceId": ws, "agentSessionId": id, "dryRun": dryRun}
	if target != "" {
		in["targetAgentSessionId"] = target
	}
	var out struct{ ApplySessionChanges applyView }
	errs := h.do(`mutation($in: ApplySessionChangesInput!) { applySessionChanges(input: $in) { applied files { path status } conflicts } }`,
		map[string]any{"in": in}, &out)
	return out.ApplySessionChanges, errs
}

// Two branches of one repository: compare their code from the fork
// turn, apply the child's changes back to the parent (dry run, then for
// real, SESSION_UPDATED for the parent), a conflict writes nothing, and a
// target in another repository is refused.
func TestCompareAndApplyE2E(t *testing.T) {
	h := startServer(t, harnessOpts{})
	repo := codeRepo(t)
	h.model.SetReply(editOnce("printf 'agent\\n' > agent.txt"))
	ws := h.createWorkspaceAt("code", repo, "")
	var started struct{ StartSession struct{ ID string } }
	h.must(`mutation($in: StartSessionInput!) { startSession(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "settings": map[string]any{"permissionModeId": "full-access"}}}, &started)
	parent := started.StartSession.ID
	turn1 := h.send(ws, parent, "edit the files")
	turns := h.codeTurns(ws, parent)
	cp := turns[len(turns)-1].Checkpoint
	if cp == nil {
		t.Fatal("turn 1 has no checkpoint")
	}
	child := h.forkAs(ws, parent, "child", turn1)
	wt := h.worktreeChild(child.ID, cp.Commit, repo)
	// The child's agent's work.
	if err := os.WriteFile(filepath.Join(wt, "a.txt"), []byte("a1\na2\nchild\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wt, "child.txt"), []byte("child\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	var cmp struct {
		CompareSessions struct {
			Code *struct {
				Base                     *struct{ Commit string }
				AChanges, BChanges, Diff codeDiffView
			}
		}
	}
	h.must(`query($ws: ID!, $a: ID!, $b: ID!) { compareSessions(workspaceId: $ws, a: $a, b: $b) {
  code { base { commit } aChanges { files { path status } } bChanges { files { path status } } diff { files { path status } patch } } } }`,
		map[string]any{"ws": ws, "a": parent, "b": child.ID}, &cmp)
	code := cmp.CompareSessions.Code
	if code == nil || code.Base == nil || code.Base.Commit != cp.Commit {
		t.Fatalf("comparison code = %+v", code)
	}
	if len(code.AChanges.Files) != 0 || len(code.BChanges.Files) != 2 || len(code.Diff.Files) != 2 {
		t.Fatalf("comparison = a %+v b %+v diff %+v", code.AChanges.Files, code.BChanges.Files, code.Diff.Files)
	}

	sub := h.ws(protoTransportWS).subscribe(`subscription($ws: ID!, $s: ID, $after: Int64) {
  activity(workspaceId: $ws, agentSessionId: $s, afterSeq: $after) { kind agentSessionId }
}`, activityVars(ws, parent, h.publishMarker(ws)))

	dry, errs := h.apply(ws, child.ID, true, "")
	if len(errs) > 0 || dry.Applied || len(dry.Files) != 2 || len(dry.Conflicts) != 0 {
		t.Fatalf("dry run = %+v %+v", dry, errs)
	}
	if _, err := os.Stat(filepath.Join(repo, "child.txt")); !os.IsNotExist(err) {
		t.Fatal("a dry run wrote child.txt")
	}
	res, errs := h.apply(ws, child.ID, false, "")
	if len(errs) > 0 || !res.Applied {
		t.Fatalf("apply = %+v %+v", res, errs)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "a.txt")); string(b) != "a1\na2\nchild\n" {
		t.Fatalf("parent's a.txt = %q", b)
	}
	for {
		r, ok, timedOut := sub.next(10 * time.Second)
		if !ok || timedOut {
			t.Fatal("no SESSION_UPDATED for the parent after apply")
		}
		var ev struct {
			Activity struct{ Kind, AgentSessionID string }
		}
		_ = json.Unmarshal(r.Data, &ev)
		if ev.Activity.Kind == "SESSION_UPDATED" && ev.Activity.AgentSessionID == parent {
			break
		}
	}

	// A conflict: both change the same line; nothing is written.
	if err := os.WriteFile(filepath.Join(wt, "a.txt"), []byte("a1\nchild a2\nchild\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "a.txt"), []byte("a1\nparent a2\nchild\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, errs = h.apply(ws, child.ID, false, "")
	if len(errs) > 0 || res.Applied || !slices.Equal(res.Conflicts, []string{"a.txt"}) {
		t.Fatalf("conflicting apply = %+v %+v", res, errs)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "a.txt")); string(b) != "a1\nparent a2\nchild\n" {
		t.Fatalf("a conflicting apply wrote a.txt: %q", b)
	}

	// A target in another repository (nested in the workspace): refused.
	nested := filepath.Join(repo, "nested")
	if err := os.MkdirAll(nested, 0o755); err != nil {
		t.Fatal(err)
	}
	gitE2E(t, nested, "init", "-q")
	var other struct{ StartSession struct{ ID string } }
	h.must(`mutation($in: StartSessionInput!) { startSession(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "cwd": "nested"}}, &other)
	if _, errs := h.apply(ws, child.ID, false, other.StartSession.ID); errCode(errs) != "invalid_input" ||
		!strings.Contains(errs[0].Message, "another repository") {
		t.Fatalf("apply to another repository: %+v", errs)
	}
	if out := gitE2E(t, nested, "status", "--porcelain"); out != "" {
		t.Fatalf("the other repository changed: %s", out)
	}
}

// An interrupted turn gets its checkpoint too: the agent's command ran,
// then the person stopped the turn while the model was still answering.
func TestInterruptedTurnCheckpointE2E(t *testing.T) {
	h := startServer(t, harnessOpts{})
	repo := codeRepo(t)
	h.model.SetReply(func(r codextest.Request) codextest.Reply {
		if r.AfterToolCall() {
			return codextest.Reply{Text: "still thinking", Delay: 30 * time.Second}
		}
		return codextest.Reply{FunctionCall: &codextest.FunctionCall{Cmd: "printf 'half done\\n' > interrupted.txt"}}
	})
	ws := h.createWorkspaceAt("code", repo, "")
	var started struct{ StartSession struct{ ID string } }
	h.must(`mutation($in: StartSessionInput!) { startSession(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "settings": map[string]any{"permissionModeId": "full-access"}}}, &started)
	s := started.StartSession.ID
	var out struct{ SendMessage struct{ ID string } }
	h.must(`mutation($in: SendMessageInput!) { sendMessage(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": s, "text": "edit, slowly"}}, &out)
	turnID := out.SendMessage.ID
	// The second model request carries the command's output: it ran.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := h.model.WaitRequests(ctx, 2); err != nil {
		t.Fatal(err)
	}
	h.must(`mutation($in: InterruptTurnInput!) { interruptTurn(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": s, "turnId": turnID}}, nil)
	h.waitTurn(ws, s, turnID, "INTERRUPTED")
	turns := h.codeTurns(ws, s)
	last := turns[len(turns)-1]
	if last.ID != turnID || last.Status != "INTERRUPTED" || last.Checkpoint == nil || last.Diff == nil {
		t.Fatalf("interrupted turn = %+v", last)
	}
	if len(last.Diff.Files) != 1 || last.Diff.Files[0].Path != "interrupted.txt" || last.Diff.Files[0].Status != "ADDED" {
		t.Fatalf("interrupted turn's diff = %+v", last.Diff.Files)
	}
}
