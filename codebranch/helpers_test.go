package codebranch_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tuttid/activity/activitytest"
	"tuttid/codebranch"
	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/ent/turn"
	"tuttid/gitrepo"
	"tuttid/store/storetest"
)

const gitBin = "/usr/bin/git"

// kit is a store, a codebranch.Service with a data directory, and a
// recording publisher.
type kit struct {
	t    *testing.T
	ctx  context.Context
	st   *storetest.Store
	svc  *codebranch.Service
	pub  *activitytest.Recorder
	data string
}

func newKit(t *testing.T) *kit {
	t.Helper()
	if _, err := os.Stat(gitBin); err != nil {
		t.Skipf("no git at %s", gitBin)
	}
	st := storetest.New(t)
	st.Workspace(storetest.Workspace{ID: "w1", RootPath: "/"})
	pub := &activitytest.Recorder{}
	data := t.TempDir()
	svc := codebranch.New(codebranch.Config{Store: st.Store, Git: gitrepo.New(gitrepo.Config{Bin: gitBin}),
		DataDir: data, Publisher: pub})
	t.Cleanup(func() { svc.Wait(context.Background()) }) // before data goes
	return &kit{t: t, ctx: context.Background(), st: st, svc: svc, pub: pub, data: data}
}

// session seeds a READY session working in cwd.
func (k *kit) session(id, cwd string) *ent.AgentSession {
	k.t.Helper()
	return k.st.Session(storetest.Session{ID: id, Workspace: "w1", Cwd: cwd})
}

// endTurn stores a turn, runs TurnEnded on it and stores its checkpoint
// as session.completeTurn does; it returns the turn read back.
func (k *kit) endTurn(a *ent.AgentSession, turnID string) *ent.Turn {
	k.t.Helper()
	n, _ := k.st.Client.Turn.Query().Where(turn.AgentSessionID(a.ID)).Count(k.ctx)
	t, err := k.st.Client.Turn.Create().SetAgentSessionID(a.ID).SetTurnID(turnID).
		SetStartedAt(storetest.SeedTime().Add(time.Duration(n+1) * time.Minute)).Save(k.ctx)
	if err != nil {
		k.t.Fatal(err)
	}
	cp, ok := k.svc.TurnEnded(k.ctx, a, turnID)
	up := t.Update().SetStatus(turn.StatusCOMPLETED)
	if ok {
		up = up.SetCheckpointCommit(cp.Commit).SetCheckpointHead(cp.Head).SetCheckpointAt(cp.At)
	}
	if t, err = up.Save(k.ctx); err != nil {
		k.t.Fatal(err)
	}
	return t
}

func (k *kit) setStatus(id string, st agentsession.Status) {
	k.t.Helper()
	if err := k.st.Client.AgentSession.UpdateOneID(id).SetStatus(st).Exec(k.ctx); err != nil {
		k.t.Fatal(err)
	}
}

// gitT runs git as a person would.
func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(gitBin, args...)
	cmd.Dir = dir
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "GIT_OPTIONAL_LOCKS=0",
		"GIT_AUTHOR_NAME=Person", "GIT_AUTHOR_EMAIL=person@example.com",
		"GIT_COMMITTER_NAME=Person", "GIT_COMMITTER_EMAIL=person@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return strings.TrimRight(string(out), "\n")
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// newRepo makes a repository with one commit of a.txt and b.txt, a staged
// change, a stash entry and a .gitignore'd file, so that a test sees
// whether anything of the person's moved.
func newRepo(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	writeFile(t, filepath.Join(dir, "a.txt"), "a1\na2\na3\n")
	writeFile(t, filepath.Join(dir, "b.txt"), "b1\nb2\nb3\n")
	writeFile(t, filepath.Join(dir, ".gitignore"), "*.log\n")
	gitT(t, dir, "init", "-q", "-b", "main")
	gitT(t, dir, "add", "-A")
	gitT(t, dir, "commit", "-q", "-m", "first")
	writeFile(t, filepath.Join(dir, "b.txt"), "b1\nstashed\n")
	gitT(t, dir, "stash", "-q")
	writeFile(t, filepath.Join(dir, "staged.txt"), "staged\n")
	gitT(t, dir, "add", "staged.txt")
	writeFile(t, filepath.Join(dir, "debug.log"), "ignored\n")
	return dir
}

// personState is what the person's repository shows of itself outside
// refs/tuttid: status, stash, refs, HEAD and the index's bytes.
func personState(t *testing.T, dir string) string {
	t.Helper()
	var refs []string
	for _, l := range strings.Split(gitT(t, dir, "for-each-ref", "--format=%(refname) %(objectname)"), "\n") {
		if !strings.HasPrefix(l, "refs/tuttid/") {
			refs = append(refs, l)
		}
	}
	index, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join([]string{
		gitT(t, dir, "status", "--porcelain=v1", "--untracked-files=all"),
		gitT(t, dir, "stash", "list"),
		strings.Join(refs, "\n"),
		gitT(t, dir, "rev-parse", "HEAD"),
		gitT(t, dir, "symbolic-ref", "HEAD"),
		string(index),
	}, "\n--\n")
}

func paths(d *gitrepo.Diff) []string {
	var out []string
	for _, f := range d.Files {
		out = append(out, string(f.Status)+" "+f.Path)
	}
	return out
}
