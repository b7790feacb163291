package lineage_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/lineage"
	"tuttid/store/storetest"
)

// turns gives a session turns with the given provider ids, in that order.
func (e *env) turns(t testing.TB, sessionID string, turnIDs ...string) {
	t.Helper()
	turns := make([]storetest.Turn, len(turnIDs))
	for i, id := range turnIDs {
		turns[i] = storetest.Turn{ID: id}
	}
	e.st.Turns(sessionID, turns...)
}

// forkAt records child as forked from parent through turnID ("" for the
// whole conversation) at time at.
func (e *env) forkAt(t testing.TB, ws, parent, child, turnID string, at int64) {
	t.Helper()
	e.nextReq++
	e.st.Forks(storetest.Fork{Workspace: ws, Parent: parent, Child: child, TurnID: turnID,
		RequestID: fmt.Sprintf("req-%d", e.nextReq), At: at})
}

func (e *env) get(t testing.TB, id string) *ent.AgentSession {
	t.Helper()
	s, err := e.st.Client.AgentSession.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func turnIDs(ts []*ent.Turn) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.TurnID
	}
	return out
}

// forkedConversations builds, in workspace w, a conversation the way Codex
// forks it (a child keeps the ids of the turns it inherits):
//
//	root  t1 t2 t3
//	├── c   (from t1)   t1 c1 c2
//	│   └── g (from c1) t1 c1 g1
//	└── w   (whole)     t1 t2 t3 w1
//
// plus an unrelated session u (t1 is its own turn id too, by chance) and a
// session x in workspace w2.
func forkedConversations(t *testing.T) *env {
	e := newEnv(t)
	e.workspace(t, "w")
	e.workspace(t, "w2")
	e.sessions(t, "w", "root", "c", "g", "whole", "u")
	e.sessions(t, "w2", "x")
	e.turns(t, "root", "t1", "t2", "t3")
	e.turns(t, "c", "t1", "c1", "c2")
	e.turns(t, "g", "t1", "c1", "g1")
	e.turns(t, "whole", "t1", "t2", "t3", "w1")
	e.turns(t, "u", "u0", "u1")
	e.forkAt(t, "w", "root", "c", "t1", 10)
	e.forkAt(t, "w", "c", "g", "c1", 20)
	e.forkAt(t, "w", "root", "whole", "", 30)
	return e
}

func TestCompare(t *testing.T) {
	t.Parallel()
	e := forkedConversations(t)
	ctx := context.Background()
	for _, tc := range []struct {
		a, b         string
		ancestor     string // "" for none
		shared       []string
		aOnly, bOnly []string
	}{
		{"root", "g", "root", []string{"t1"}, []string{"t2", "t3"}, []string{"c1", "g1"}}, // across a grandchild
		{"g", "root", "root", []string{"t1"}, []string{"c1", "g1"}, []string{"t2", "t3"}},
		{"c", "g", "c", []string{"t1", "c1"}, []string{"c2"}, []string{"g1"}},
		{"g", "whole", "root", []string{"t1"}, []string{"c1", "g1"}, []string{"t2", "t3", "w1"}}, // cousins
		{"root", "whole", "root", []string{"t1", "t2", "t3"}, []string{}, []string{"w1"}},
		{"g", "g", "g", []string{"t1", "c1", "g1"}, []string{}, []string{}},
		{"g", "u", "", []string{}, []string{"t1", "c1", "g1"}, []string{"u0", "u1"}}, // different trees
	} {
		t.Run(tc.a+"-"+tc.b, func(t *testing.T) {
			got, err := lineage.Compare(ctx, e.c, e.get(t, tc.a), e.get(t, tc.b))
			if err != nil {
				t.Fatal(err)
			}
			anc := ""
			if got.CommonAncestor != nil {
				anc = got.CommonAncestor.ID
				if got.CommonAncestor.Title != "title "+anc {
					t.Errorf("common ancestor not loaded whole: %+v", got.CommonAncestor)
				}
			}
			if anc != tc.ancestor {
				t.Errorf("CommonAncestor = %q, want %q", anc, tc.ancestor)
			}
			if got.A.ID != tc.a || got.B.ID != tc.b {
				t.Errorf("A, B = %s, %s", got.A.ID, got.B.ID)
			}
			for _, c := range []struct {
				what      string
				got, want []string
			}{{"Shared", turnIDs(got.SharedTurns), tc.shared}, {"AOnly", turnIDs(got.AOnly), tc.aOnly}, {"BOnly", turnIDs(got.BOnly), tc.bOnly}} {
				if !slices.Equal(c.got, c.want) {
					t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
				}
			}
			for _, tt := range got.SharedTurns {
				if tt.AgentSessionID != tc.a {
					t.Errorf("shared turn %s is %s's row, want %s's", tt.TurnID, tt.AgentSessionID, tc.a)
				}
			}
		})
	}
	if _, err := lineage.Compare(ctx, e.c, e.get(t, "root"), e.get(t, "x")); err == nil {
		t.Error("Compare across workspaces succeeded, want an error")
	}
}

func TestForkPoints(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.workspace(t, "w")
	e.sessions(t, "w", "p", "w1", "a", "b", "c", "d", "gone-turn", "alone")
	e.turns(t, "p", "t1", "t2", "t3")
	// Recorded out of conversation order: t3 first, then t1 twice, a
	// whole-conversation fork between them, and a turn p does not have.
	e.forkAt(t, "w", "p", "c", "t3", 10)
	e.forkAt(t, "w", "p", "w1", "", 15)
	e.forkAt(t, "w", "p", "a", "t1", 20)
	e.forkAt(t, "w", "p", "gone-turn", "t9", 25)
	e.forkAt(t, "w", "p", "b", "t1", 30)
	e.forkAt(t, "w", "a", "d", "t1", 40) // a grandchild: a's fork point, not p's
	ctx := context.Background()

	points, err := lineage.ForkPoints(ctx, e.c, "w", "p")
	if err != nil {
		t.Fatal(err)
	}
	type pv struct {
		turn string
		kids string
	}
	var got []pv
	for _, p := range points {
		got = append(got, pv{p.TurnID, fmt.Sprint(ids(p.Children))})
		for _, k := range p.Children {
			if k.Title != "title "+k.ID {
				t.Errorf("child not loaded whole: %+v", k)
			}
		}
	}
	want := []pv{{"t1", "[a b]"}, {"t3", "[c]"}, {"t9", "[gone-turn]"}, {"", "[w1]"}}
	if !slices.Equal(got, want) {
		t.Fatalf("ForkPoints(p) = %v, want %v", got, want)
	}
	for _, id := range []string{"alone", "missing"} {
		points, err := lineage.ForkPoints(ctx, e.c, "w", id)
		if err != nil || points == nil || len(points) != 0 {
			t.Errorf("ForkPoints(%s) = %v, %v; want an empty list", id, points, err)
		}
	}
	if points, err := lineage.ForkPoints(ctx, e.c, "other", "p"); err != nil || len(points) != 0 {
		t.Errorf("ForkPoints in another workspace = %v, %v", points, err)
	}
}

func TestSubtreeAndPredicates(t *testing.T) {
	t.Parallel()
	e := sampleTree(t)
	ctx := context.Background()
	nodes, err := lineage.Subtree(ctx, e.c, "w", "a")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := view(nodes), []nodeView{{"a", "", 0}, {"a1", "a", 1}, {"a2", "a", 1}}; !slices.Equal(got, want) {
		t.Fatalf("Subtree(a) = %v, want %v", got, want)
	}
	if nodes, _ := lineage.Subtree(ctx, e.c, "w", "missing"); len(nodes) != 0 {
		t.Fatalf("Subtree(missing) = %v", view(nodes))
	}

	// The predicates select, update and delete with one statement each.
	chain, err := e.c.AgentSession.Query().Where(lineage.InChain("w", "a1")).IDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(chain)
	if want := []string{"a", "a1", "root"}; !slices.Equal(chain, want) {
		t.Fatalf("InChain(a1) = %v, want %v", chain, want)
	}
	e.count.Reset()
	n, err := e.c.AgentSession.Update().Where(lineage.InSubtree("w", "root"), agentsession.ArchivedEQ(false)).
		SetArchived(true).Save(ctx)
	if err != nil || n != 7 {
		t.Fatalf("archive root's subtree: %d rows, %v; want 7", n, err)
	}
	if q := e.count.N(); q != 1 {
		t.Fatalf("archiving a subtree took %d statements, want 1", q)
	}
	if other := e.get(t, "other"); other.Archived {
		t.Fatal("a session of another tree was archived")
	}
	e.count.Reset()
	n, err = e.c.AgentSession.Delete().Where(lineage.InSubtree("w", "b")).Exec(ctx)
	if err != nil || n != 2 {
		t.Fatalf("delete b's subtree: %d rows, %v; want 2 (b, b1)", n, err)
	}
	if q := e.count.N(); q != 1 {
		t.Fatalf("deleting a subtree took %d statements, want 1", q)
	}
	left, err := lineage.Tree(ctx, e.c, "w", "root")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := view(left), []nodeView{{"root", "", 0}, {"a", "root", 1}, {"a1", "a", 2}, {"a2", "a", 2}, {"c", "root", 1}}; !slices.Equal(got, want) {
		t.Fatalf("tree after deleting b's subtree = %v, want %v", got, want)
	}
}

func TestForest(t *testing.T) {
	t.Parallel()
	e := sampleTree(t)
	e.sessions(t, "w", "alone")
	nodes, err := lineage.Forest(context.Background(), e.c, "w")
	if err != nil {
		t.Fatal(err)
	}
	got := view(nodes)
	want := []nodeView{
		{"root", "", 0}, {"a", "root", 1}, {"a1", "a", 2}, {"a2", "a", 2}, {"b", "root", 1}, {"b1", "b", 2}, {"c", "root", 1},
		{"other", "", 0}, {"other1", "other", 1},
		{"alone", "", 0},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Forest =\n%v\nwant\n%v", got, want)
	}
	for _, n := range nodes {
		if (n.Fork == nil) != (n.ParentID == "") || (n.Fork != nil && (n.Fork.ChildAgentSessionID != n.Session.ID || n.Fork.ParentAgentSessionID != n.ParentID)) {
			t.Fatalf("node %s: Fork %+v does not match its parent %q", n.Session.ID, n.Fork, n.ParentID)
		}
	}
	if nodes, err := lineage.Forest(context.Background(), e.c, "empty"); err != nil || len(nodes) != 0 {
		t.Fatalf("Forest(empty) = %v, %v", view(nodes), err)
	}
}

// branchyTree builds a tree of n sessions in workspace w: a spine of depth
// n/4, and each later session i forked from session 2i/3, so branches
// hang off branches. It returns the root, the spine's leaf and the last
// session, whose nearest common ancestor is a spine session inside.
func branchyTree(t testing.TB, e *env, prefix string, n int) (root, leaf, last string) {
	t.Helper()
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%04d", prefix, i)
	}
	e.sessions(t, "w", names...)
	spine := max(n/4, 1)
	var edges []edge
	for i := 1; i < n; i++ {
		parent := names[i-1]
		if i > spine {
			parent = names[i*2/3]
		}
		edges = append(edges, edge{parent, names[i], int64(i)})
	}
	e.forks(t, "w", edges...)
	return names[0], names[spine], names[n-1]
}

// TestToolingConstantQueries: on a tree of 1,000 sessions, comparing two
// deep sessions, reading fork points, the subtree and the forest cost the
// same number of SQL statements as on a tree of 12.
func TestToolingConstantQueries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.workspace(t, "w")
	ctx := context.Background()
	type cost struct{ compare, forkPoints, subtree, forest int64 }
	measure := func(prefix string, n int) cost {
		root, leaf, other := branchyTree(t, e, prefix, n)
		for _, id := range []string{root, leaf, other} {
			e.turns(t, id, "t-"+prefix, "own-"+id)
		}
		var c cost
		e.count.Reset()
		cmp, err := lineage.Compare(ctx, e.c, e.get(t, leaf), e.get(t, other))
		if err != nil {
			t.Fatal(err)
		}
		c.compare = e.count.Reset()
		if cmp.CommonAncestor == nil || cmp.CommonAncestor.ID == leaf || cmp.CommonAncestor.ID == other || cmp.CommonAncestor.ID == root {
			t.Fatalf("%d sessions: common ancestor of %s and %s = %v, want a third session", n, leaf, other, cmp.CommonAncestor)
		}
		if len(cmp.SharedTurns) != 1 || len(cmp.AOnly) != 1 || len(cmp.BOnly) != 1 {
			t.Fatalf("%d sessions: shared %v, aOnly %v, bOnly %v", n, turnIDs(cmp.SharedTurns), turnIDs(cmp.AOnly), turnIDs(cmp.BOnly))
		}
		points, err := lineage.ForkPoints(ctx, e.c, "w", root)
		if err != nil || len(points) == 0 {
			t.Fatalf("ForkPoints: %v, %v", points, err)
		}
		c.forkPoints = e.count.Reset()
		sub, err := lineage.Subtree(ctx, e.c, "w", root)
		if err != nil || len(sub) != n {
			t.Fatalf("%d sessions: Subtree has %d, %v", n, len(sub), err)
		}
		c.subtree = e.count.Reset()
		if _, err := lineage.Forest(ctx, e.c, "w"); err != nil {
			t.Fatal(err)
		}
		c.forest = e.count.Reset()
		return c
	}
	small := measure("small", 12)
	large := measure("large", 1000)
	t.Logf("queries: 12 sessions %+v, 1000 sessions %+v", small, large)
	if small != large {
		t.Fatalf("query counts grow with the tree: 12 sessions %+v, 1000 sessions %+v", small, large)
	}
	if small.compare == 0 {
		t.Fatal("counted no queries: the counting driver is bypassed")
	}
	if small.compare > 3 || small.forkPoints > 3 || small.subtree > 2 || small.forest > 2 {
		t.Fatalf("more queries than expected: %+v", small)
	}
}
