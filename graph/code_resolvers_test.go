package graph_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/client"

	"tuttid/activity"
	"tuttid/agent/agenttest"
	codebranchsvc "tuttid/codebranch"
	"tuttid/ent/sessioncode"
	"tuttid/fork"
	"tuttid/gitrepo"
	"tuttid/graph"
	"tuttid/session"
	"tuttid/sessionread"
	"tuttid/store/storetest"
)

// AgentSession.code on a list reads the code rows of the whole page in one
// query (read-ahead), and runs no git for the fields that need none.
func TestSessionCodeListQueryCount(t *testing.T) {
	t.Parallel()
	counts := map[int]int64{}
	for _, n := range []int{3, 30} {
		db := storetest.New(t)
		st, queries := db.Counting()
		broker := activity.New(activity.Options{})
		t.Cleanup(broker.Close)
		code := codebranchsvc.New(codebranchsvc.Config{Store: st})
		sessions := session.New(session.Config{Store: st, Runtime: agenttest.Idle(), Publisher: broker, Code: code.Hooks()})
		h := graph.NewHandler(graph.HandlerConfig{Sessions: sessions, Reads: sessionread.New(sessionread.Config{Store: st}), Code: code,
			Forks: fork.New(fork.Config{Store: st, Sessions: sessions, Runtime: agenttest.Idle()})})
		db.Workspace(storetest.Workspace{ID: "ws"})
		for i := range n {
			id := fmt.Sprintf("s%02d", i)
			db.Session(storetest.Session{ID: id, Workspace: "ws", Cwd: "/work/ws"})
			if i%2 == 0 { // every other one in a repository (no git is run)
				db.Client.SessionCode.Create().SetAgentSessionID(id).SetWorkspaceID("ws").
					SetMode(sessioncode.ModeWORKTREE).SetRepositoryRoot("/nowhere/" + id).SetWorktreePath("/nowhere/" + id).
					SetWorktreePresent(true).ExecX(t.Context())
			}
		}
		var out struct {
			Workspace struct {
				Sessions struct {
					Edges []struct {
						Node struct {
							ID   string
							Code *struct {
								Mode, RepositoryRoot string
								WorktreePath         *string
								WorktreePresent      bool
							}
						}
					}
				}
			}
		}
		c := client.New(h)
		counts[n] = queries.Count(func() {
			c.MustPost(`query($id: ID!) { workspace(id: $id) { sessions(first: 200) { edges { node { id code { mode repositoryRoot worktreePath worktreePresent } } } } } }`,
				&out, client.Var("id", "ws"))
		})
		edges := out.Workspace.Sessions.Edges
		if len(edges) != n {
			t.Fatalf("n=%d: %d sessions", n, len(edges))
		}
		for i, e := range edges {
			var k int
			fmt.Sscanf(e.Node.ID, "s%02d", &k)
			if (k%2 == 0) != (e.Node.Code != nil) {
				t.Fatalf("session %d %s: code %+v", i, e.Node.ID, e.Node.Code)
			}
			if e.Node.Code != nil && (e.Node.Code.Mode != "WORKTREE" || e.Node.Code.WorktreePath == nil || !e.Node.Code.WorktreePresent) {
				t.Fatalf("session %s: code %+v", e.Node.ID, e.Node.Code)
			}
		}
	}
	if counts[3] != counts[30] {
		t.Errorf("queries: %v, want the same for 3 and 30 sessions", counts)
	}
}

// TestSharedChangesListReadsTheCheckoutOnce: a list asking every session's
// code.changes runs git for a checkout's SHARED sessions once (they all
// have its files against its HEAD), however many sessions work there; a
// second query reads the files again.
func TestSharedChangesListReadsTheCheckoutOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	repo := filepath.Join(dir, "repo")
	if err := os.Mkdir(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "first"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if err := os.WriteFile(filepath.Join(repo, "new.txt"), []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// git, counting its runs.
	calls := filepath.Join(dir, "calls")
	bin := filepath.Join(dir, "git")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho >> '"+calls+"'\nexec /usr/bin/git \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	runs := func() int {
		b, _ := os.ReadFile(calls)
		return strings.Count(string(b), "\n")
	}
	db := storetest.New(t)
	code := codebranchsvc.New(codebranchsvc.Config{Store: db.Store, Git: gitrepo.New(gitrepo.Config{Bin: bin})})
	sessions := session.New(session.Config{Store: db.Store, Runtime: agenttest.Idle(), Code: code.Hooks()})
	h := graph.NewHandler(graph.HandlerConfig{Sessions: sessions, Reads: sessionread.New(sessionread.Config{Store: db.Store}), Code: code,
		Forks: fork.New(fork.Config{Store: db.Store, Sessions: sessions, Runtime: agenttest.Idle()})})
	db.Workspace(storetest.Workspace{ID: "ws"})
	c := client.New(h)
	list := func() (files []string) {
		var out struct {
			Workspace struct {
				Sessions struct {
					Edges []struct {
						Node struct {
							Code struct {
								Changes struct{ Files []struct{ Path string } }
							}
						}
					}
				}
			}
		}
		c.MustPost(`query($id: ID!) { workspace(id: $id) { sessions(first: 50) { edges { node { code { changes { files { path } } } } } } } }`,
			&out, client.Var("id", "ws"))
		for _, e := range out.Workspace.Sessions.Edges {
			if len(e.Node.Code.Changes.Files) != 1 {
				t.Fatalf("changes %+v, want new.txt", e.Node.Code.Changes)
			}
			files = append(files, e.Node.Code.Changes.Files[0].Path)
		}
		return files
	}
	perList := map[int]int{}
	n := 0
	for _, want := range []int{2, 8} {
		for ; n < want; n++ {
			id := fmt.Sprintf("s%02d", n)
			db.Session(storetest.Session{ID: id, Workspace: "ws", Cwd: repo})
			db.Client.SessionCode.Create().SetAgentSessionID(id).SetWorkspaceID("ws").
				SetMode(sessioncode.ModeSHARED).SetRepositoryRoot(repo).ExecX(t.Context())
		}
		list() // the checkout opened once (rev-parse, config)
		before := runs()
		if files := list(); len(files) != want {
			t.Fatalf("%d sessions listed, want %d", len(files), want)
		}
		perList[want] = runs() - before
	}
	if perList[2] == 0 || perList[2] != perList[8] {
		t.Errorf("git runs per list: %v, want the same (and some) for 2 and 8 SHARED sessions of one checkout", perList)
	}
}
