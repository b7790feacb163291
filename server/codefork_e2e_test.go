package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"tuttid/codex/codextest"
	"tuttid/ent/forkjournal"
	"tuttid/ent/sessioncode"
	"tuttid/ent/turn"
	"tuttid/gitrepo"
)

// gitRepo makes a repository with a commit, an uncommitted change, an
// untracked file and an ignored .env that .worktreeinclude names.
func gitRepo(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	git(t, dir, "init", "-q", "-b", "main")
	write(t, dir, "a.txt", "one\n")
	write(t, dir, ".gitignore", ".env\n")
	write(t, dir, ".worktreeinclude", ".env\n")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "first")
	write(t, dir, "a.txt", "one\ntwo\n")
	write(t, dir, "b.txt", "untracked\n")
	write(t, dir, ".env", "SECRET=1\n")
	return dir
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return string(b)
}

// repoState is what a fork must not change in the parent's repository:
// status, HEAD, branches, stash, and every ref outside refs/tuttid/.
func repoState(t *testing.T, dir string) string {
	t.Helper()
	var refs []string
	for _, l := range strings.Split(git(t, dir, "for-each-ref", "--format=%(refname) %(objectname)"), "\n") {
		if !strings.HasPrefix(l, "refs/tuttid/") {
			refs = append(refs, l)
		}
	}
	return git(t, dir, "status", "--porcelain=v1", "--untracked-files=all") + "\n--\n" +
		git(t, dir, "rev-parse", "HEAD") + "\n" + strings.Join(refs, "\n") + "\n" + readFile(t, filepath.Join(dir, "a.txt"))
}

func (h *harness) childCode(id string) *codeRow {
	h.t.Helper()
	c, err := h.srv.Store.Client.SessionCode.Query().Where(sessioncode.AgentSessionID(id)).Only(context.Background())
	if err != nil {
		h.t.Fatalf("the child's code row: %v", err)
	}
	return &codeRow{Mode: string(c.Mode), Root: c.RepositoryRoot, Path: c.WorktreePath, Present: c.WorktreePresent,
		Branch: c.Branch, Base: c.BaseCommit, Start: c.StartCommit, Setup: c.SetupOutput, Port: c.PortBase}
}

type codeRow struct {
	Mode, Root, Path, Branch, Base, Start, Setup string
	Present                                      bool
	Port                                         int
}

func (h *harness) worktreesDir(ws string) string {
	return filepath.Join(h.dataDir, "worktrees", ws)
}

func childCwd(t *testing.T, h *harness, id string) string {
	t.Helper()
	a, err := h.srv.Store.Client.AgentSession.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return a.Cwd
}

// TestWorktreeForkGivesTheChildItsOwnCode is point 2 and 7 on the real
// Codex: the whole conversation forked into a worktree has the parent's
// files (uncommitted change, untracked file, .worktreeinclude's .env),
// its cwd is the worktree (Codex's thread/fork got it), the setup ran
// there with its variables and no TUTTID_ secret, the parent's repository
// is as it was, a replay answers the same child, and the child runs turns.
func TestWorktreeForkGivesTheChildItsOwnCode(t *testing.T) {
	t.Setenv("TUTTID_SECRET_FOR_TEST", "must-not-leak")
	h := startServer(t, harnessOpts{})
	repo := gitRepo(t)
	setup := `echo "port=$TUTTID_PORT_BASE parent=$TUTTID_PARENT_DIR wt=$TUTTID_WORKTREE"; env | grep '^TUTTID_' | cut -d= -f1 | sort > setup-env.txt`
	ws := h.createWorkspaceAt("code", repo, setup)
	parent := h.startSession(ws, "parent")
	h.send(ws, parent.ID, "hello")
	before := repoState(t, repo)

	in := map[string]any{"workspaceId": ws, "agentSessionId": parent.ID, "requestId": "wt-1",
		"code": map[string]any{"mode": "WORKTREE"}}
	child, _, errs := h.fork(in)
	if len(errs) > 0 {
		t.Fatalf("fork: %v", errs)
	}
	wt := filepath.Join(h.worktreesDir(ws), child.ID)
	if got := childCwd(t, h, child.ID); got != wt {
		t.Fatalf("child cwd = %q, want the worktree %q", got, wt)
	}
	for name, want := range map[string]string{"a.txt": "one\ntwo\n", "b.txt": "untracked\n", ".env": "SECRET=1\n"} {
		if got := readFile(t, filepath.Join(wt, name)); got != want {
			t.Errorf("worktree %s = %q, want %q", name, got, want)
		}
	}
	if got := git(t, wt, "status", "--porcelain"); !strings.Contains(got, "M a.txt") || !strings.Contains(got, "?? b.txt") {
		t.Errorf("worktree status = %q, want a.txt modified and b.txt untracked", got)
	}
	if got := git(t, wt, "rev-parse", "HEAD"); got != git(t, repo, "rev-parse", "HEAD") {
		t.Errorf("worktree HEAD %s, want the parent's", got)
	}
	if b := git(t, wt, "rev-parse", "--abbrev-ref", "HEAD"); b != "HEAD" {
		t.Errorf("worktree HEAD on %q, want detached", b)
	}
	row := h.childCode(child.ID)
	if row.Mode != "WORKTREE" || row.Path != wt || !row.Present || row.Base == "" || row.Start != row.Base || row.Root != wt {
		t.Errorf("code row = %+v", row)
	}
	if !strings.Contains(row.Setup, "parent="+repo) || !strings.Contains(row.Setup, "wt="+wt) || row.Port < 1024 ||
		!strings.Contains(row.Setup, "port=") {
		t.Errorf("setup output = %q (port %d)", row.Setup, row.Port)
	}
	if env := readFile(t, filepath.Join(wt, "setup-env.txt")); env != "TUTTID_PARENT_DIR\nTUTTID_PORT_BASE\nTUTTID_WORKTREE\n" {
		t.Errorf("setup saw TUTTID_ variables %q, want only its three", env)
	}
	if got := repoState(t, repo); got != before {
		t.Errorf("the parent's repository changed:\n%s\nwant\n%s", got, before)
	}

	// A replay answers the same child and worktree; nothing new is made.
	again, _, errs := h.fork(in)
	if len(errs) > 0 || again.ID != child.ID {
		t.Fatalf("replay = %s %v, want %s", again.ID, errs, child.ID)
	}
	// A second worktree gets another port base.
	other, _, errs := h.fork(map[string]any{"workspaceId": ws, "agentSessionId": parent.ID, "requestId": "wt-2",
		"code": map[string]any{"mode": "WORKTREE"}})
	if len(errs) > 0 {
		t.Fatalf("second fork: %v", errs)
	}
	if p := h.childCode(other.ID).Port; p == row.Port {
		t.Errorf("two live worktrees share port base %d", p)
	}

	// The child runs in its worktree: a turn works (the cwd rule lets the
	// worktree in), and its command writes there, not in the parent.
	h.model.SetReply(func(r codextest.Request) codextest.Reply { return replyWithCommand(r, "echo child > child.txt") })
	h.send(ws, child.ID, "write")
	if got := readFile(t, filepath.Join(wt, "child.txt")); got != "child\n" {
		t.Errorf("child.txt = %q", got)
	}
	if _, err := os.Stat(filepath.Join(repo, "child.txt")); err == nil {
		t.Error("the child's command wrote into the parent's directory")
	}

	// A worktree child forks into a worktree of its own, with its files.
	grand, _, errs := h.fork(map[string]any{"workspaceId": ws, "agentSessionId": child.ID, "requestId": "wt-3",
		"code": map[string]any{"mode": "WORKTREE"}})
	if len(errs) > 0 {
		t.Fatalf("grandchild fork: %v", errs)
	}
	gwt := filepath.Join(h.worktreesDir(ws), grand.ID)
	if got := childCwd(t, h, grand.ID); got != gwt {
		t.Errorf("grandchild cwd %q, want %q", got, gwt)
	}
	if got := readFile(t, filepath.Join(gwt, "child.txt")); got != "child\n" {
		t.Errorf("grandchild child.txt = %q", got)
	}
}

// TestWorktreeForkFromTurnUsesItsCheckpoint forks from a turn whose
// checkpoint (filled by the turn's end; set here as it would be) differs
// from the files now, onto a new branch.
func TestWorktreeForkFromTurnUsesItsCheckpoint(t *testing.T) {
	h := startServer(t, harnessOpts{})
	repo := gitRepo(t)
	ws := h.createWorkspaceAt("code", repo, "")
	parent := h.startSession(ws, "parent")
	turnID := h.send(ws, parent.ID, "hello")
	setTurnCheckpoint(t, h, parent.ID, turnID, repo)
	write(t, repo, "a.txt", "later\n") // after the turn: not in the child
	head := git(t, repo, "rev-parse", "HEAD")

	child, _, errs := h.fork(map[string]any{"workspaceId": ws, "agentSessionId": parent.ID, "requestId": "turn-1",
		"lastTurnId": turnID, "code": map[string]any{"mode": "WORKTREE", "branch": "try/one"}})
	if len(errs) > 0 {
		t.Fatalf("fork: %v", errs)
	}
	wt := childCwd(t, h, child.ID)
	if got := readFile(t, filepath.Join(wt, "a.txt")); got != "one\ntwo\n" {
		t.Errorf("a.txt = %q, want the turn's", got)
	}
	if b := git(t, wt, "rev-parse", "--abbrev-ref", "HEAD"); b != "try/one" {
		t.Errorf("branch = %q", b)
	}
	if got := git(t, repo, "rev-parse", "refs/heads/try/one"); got != head {
		t.Errorf("branch at %s, want HEAD %s", got, head)
	}
	if row := h.childCode(child.ID); row.Branch != "try/one" {
		t.Errorf("row branch %q", row.Branch)
	}

	// A SHARED fork in a repository has a SHARED code row: from a turn its
	// start is that turn's checkpoint; of the whole conversation, the
	// parent's files recorded at the fork.
	shared, _, errs := h.fork(map[string]any{"workspaceId": ws, "agentSessionId": parent.ID, "requestId": "shared-turn",
		"lastTurnId": turnID})
	if len(errs) > 0 {
		t.Fatalf("shared fork: %v", errs)
	}
	cp := git(t, repo, "rev-parse", "refs/tuttid/sessions/"+parent.ID+"/turns/"+turnID)
	if row := h.childCode(shared.ID); row.Mode != "SHARED" || row.Start != cp || row.Root != repo || row.Path != "" {
		t.Errorf("SHARED row from a turn = %+v, want start %s", row, cp)
	}
	if got := childCwd(t, h, shared.ID); got != repo {
		t.Errorf("SHARED child cwd %q", got)
	}
	whole, _, errs := h.fork(map[string]any{"workspaceId": ws, "agentSessionId": parent.ID, "requestId": "shared-whole"})
	if len(errs) > 0 {
		t.Fatalf("shared fork: %v", errs)
	}
	if row := h.childCode(whole.ID); row.Mode != "SHARED" || row.Start == "" || row.Start == cp ||
		git(t, repo, "rev-parse", "refs/tuttid/sessions/"+whole.ID+"/start") != row.Start {
		t.Errorf("SHARED row of the whole conversation = %+v", row)
	}
	var wsOut struct {
		Workspace struct{ WorktreeSetup *string }
	}
	h.must(`query($id: ID!) { workspace(id: $id) { worktreeSetup } }`, map[string]any{"id": ws}, &wsOut)
	if wsOut.Workspace.WorktreeSetup != nil {
		t.Errorf("worktreeSetup = %q, want null for none", *wsOut.Workspace.WorktreeSetup)
	}

	// REST takes the same code.
	body := `{"requestId":"rest-wt","code":{"mode":"worktree"}}`
	resp, err := http.Post(h.url+"/v1/workspaces/"+ws+"/agent-sessions/"+parent.ID+"/fork", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ Session struct{ ID, Cwd string } }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("REST fork: %d %v", resp.StatusCode, err)
	}
	if want := filepath.Join(h.worktreesDir(ws), out.Session.ID); out.Session.Cwd != want {
		t.Errorf("REST child cwd %q, want %q", out.Session.Cwd, want)
	}
}

// setTurnCheckpoint records a turn's checkpoint as the turn's end does.
func setTurnCheckpoint(t *testing.T, h *harness, sessionID, turnID, repo string) {
	t.Helper()
	ctx := context.Background()
	r, err := gitrepo.New(gitrepo.Config{}).Open(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := r.Checkpoint(ctx, gitrepo.CheckpointOptions{Ref: gitrepo.TurnRef(sessionID, turnID)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.srv.Store.Client.Turn.Update().Where(turn.AgentSessionID(sessionID), turn.TurnID(turnID)).
		SetCheckpointCommit(cp.Commit).SetCheckpointHead(cp.Head).Save(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestWorktreeForkBadInput: each refusal is clear and leaves nothing: no
// worktree directory, no branch, no provider thread, the parent's
// repository as it was.
func TestWorktreeForkBadInput(t *testing.T) {
	h := startServer(t, harnessOpts{})
	repo := gitRepo(t)
	ws := h.createWorkspaceAt("code", repo, "")
	parent := h.startSession(ws, "parent")
	turnID := h.send(ws, parent.ID, "hello")
	plain := h.createWorkspace("plain")
	plainParent := h.startSession(plain, "plain")
	outside, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	write(t, outside, "secret.txt", "outside\n")

	cases := []struct {
		name   string
		prep   func()
		in     map[string]any
		code   string
		inMsg  string
		inRepo string // a repository whose state must not change
	}{
		{name: "branch git refuses", in: map[string]any{"code": map[string]any{"mode": "WORKTREE", "branch": "bad..name"}},
			code: "invalid_input", inMsg: "bad..name"},
		{name: "branch exists", in: map[string]any{"code": map[string]any{"mode": "WORKTREE", "branch": "main"}},
			code: "invalid_input", inMsg: "already exists"},
		{name: "not a repository", in: map[string]any{"workspaceId": plain, "agentSessionId": plainParent.ID,
			"code": map[string]any{"mode": "WORKTREE"}}, code: "agent.fork_not_a_repository", inMsg: "no git repository"},
		{name: "turn without checkpoint", prep: func() {
			// A turn stored before checkpoints existed (or whose checkpoint failed).
			h.srv.Store.Client.Turn.Update().Where(turn.AgentSessionID(parent.ID), turn.TurnID(turnID)).
				SetCheckpointCommit("").ExecX(context.Background())
		}, in: map[string]any{"lastTurnId": turnID, "code": map[string]any{"mode": "WORKTREE"}},
			code: "agent.fork_code_failed", inMsg: "no checkpoint"},
		{name: "include symlinks out", prep: func() {
			os.Remove(filepath.Join(repo, ".env"))
			if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(repo, ".env")); err != nil {
				t.Fatal(err)
			}
		}, in: map[string]any{"code": map[string]any{"mode": "WORKTREE"}}, code: "agent.fork_code_failed", inMsg: ".worktreeinclude"},
		{name: "include names a file outside", prep: func() {
			os.Remove(filepath.Join(repo, ".env"))
			write(t, repo, ".env", "SECRET=1\n")
			write(t, repo, ".worktreeinclude", "../secret.txt\n/../../etc/passwd\n.env\n")
			write(t, repo, ".gitignore", ".env\n.worktreeinclude\n")
		}, in: map[string]any{"code": map[string]any{"mode": "WORKTREE"}}},
		{name: "setup fails", prep: func() {
			var out struct {
				UpdateWorkspace struct{ WorktreeSetup *string }
			}
			h.must(`mutation($in: UpdateWorkspaceInput!) { updateWorkspace(input: $in) { worktreeSetup } }`,
				map[string]any{"in": map[string]any{"workspaceId": ws, "worktreeSetup": "echo boom; exit 3"}}, &out)
			if out.UpdateWorkspace.WorktreeSetup == nil || *out.UpdateWorkspace.WorktreeSetup != "echo boom; exit 3" {
				t.Fatalf("updateWorkspace = %v", out.UpdateWorkspace.WorktreeSetup)
			}
		}, in: map[string]any{"code": map[string]any{"mode": "WORKTREE"}}, code: "agent.fork_code_failed", inMsg: "boom"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.prep != nil {
				c.prep()
			}
			in := map[string]any{"workspaceId": ws, "agentSessionId": parent.ID, "requestId": "bad-" + string(rune('a'+i))}
			for k, v := range c.in {
				in[k] = v
			}
			target := in["workspaceId"].(string)
			before := repoState(t, repo)
			branches := git(t, repo, "branch", "--list")
			sessionsBefore := h.srv.Store.Client.AgentSession.Query().CountX(context.Background())
			worktreesBefore := dirNames(h.worktreesDir(target))
			refsBefore := git(t, repo, "for-each-ref", "refs/tuttid/")
			child, _, errs := h.fork(in)
			if c.code == "" {
				// Names outside the repository are not copied: the fork
				// goes on without them.
				if len(errs) > 0 {
					t.Fatalf("fork: %v", errs)
				}
				wt := childCwd(t, h, child.ID)
				if got := readFile(t, filepath.Join(wt, ".env")); got != "SECRET=1\n" {
					t.Errorf(".env = %q", got)
				}
				if _, err := os.Stat(filepath.Join(filepath.Dir(wt), "secret.txt")); err == nil {
					t.Error("a file outside the repository was copied beside the worktree")
				}
				return
			}
			if len(errs) == 0 || errs[0].Code() != c.code || !strings.Contains(errs[0].Message, c.inMsg) {
				t.Fatalf("errors = %+v, want %s naming %q", errs, c.code, c.inMsg)
			}
			if got := dirNames(h.worktreesDir(target)); got != worktreesBefore {
				t.Errorf("worktrees %q, want %q", got, worktreesBefore)
			}
			if got := repoState(t, repo); got != before {
				t.Errorf("the repository changed:\n%s\nwant\n%s", got, before)
			}
			if got := git(t, repo, "branch", "--list"); got != branches {
				t.Errorf("branches %q, want %q", got, branches)
			}
			if n := h.srv.Store.Client.AgentSession.Query().CountX(context.Background()); n != sessionsBefore {
				t.Errorf("sessions %d, want %d", n, sessionsBefore)
			}
			// No provider thread: the journal's attempt made none.
			e, err := h.srv.Store.Client.ForkJournal.Query().Where(forkjournal.RequestID(in["requestId"].(string))).Only(context.Background())
			if err == nil && e.ChildProviderSessionID != "" {
				t.Errorf("the failed fork made provider thread %s", e.ChildProviderSessionID)
			}
			if got := git(t, repo, "for-each-ref", "refs/tuttid/"); got != refsBefore {
				t.Errorf("refs/tuttid/ now\n%s\nwant\n%s", got, refsBefore)
			}
		})
	}
}

// replyWithCommand runs cmd through exec_command, then answers "done".
func replyWithCommand(r codextest.Request, cmd string) codextest.Reply {
	if r.AfterToolCall() {
		return codextest.Reply{Text: "done"}
	}
	return codextest.Reply{FunctionCall: &codextest.FunctionCall{Cmd: cmd}}
}

func dirNames(dir string) string {
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return strings.Join(names, " ")
}
