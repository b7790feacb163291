package server_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"tuttid/codex/codextest"
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

func (h *harness) workspaceAt(name, root string) string {
	h.t.Helper()
	var out struct{ CreateWorkspace struct{ ID string } }
	h.must(`mutation($in: CreateWorkspaceInput!) { createWorkspace(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"name": name, "rootPath": root}}, &out)
	return out.CreateWorkspace.ID
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
	ws := h.workspaceAt("code", repo)
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
