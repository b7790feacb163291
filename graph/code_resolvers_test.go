package graph_test

import (
	"fmt"
	"testing"

	"github.com/99designs/gqlgen/client"

	"tuttid/activity"
	"tuttid/agent/agenttest"
	"tuttid/ent/sessioncode"
	"tuttid/fork"
	"tuttid/graph"
	"tuttid/session"
	sessioncodesvc "tuttid/sessioncode"
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
		code := sessioncodesvc.New(sessioncodesvc.Config{Store: st})
		sessions := session.New(session.Config{Store: st, Runtime: agenttest.Idle(), Publisher: broker, Code: code})
		h := graph.NewHandler(graph.HandlerConfig{Sessions: sessions, Code: code,
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
