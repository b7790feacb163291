package lineage_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"tuttid/agent"
	"tuttid/ent"
	"tuttid/lineage"
	"tuttid/store/storetest"
)

// env is a migrated database file with a plain client (st.Client, for
// seeding) and a counting one over the same *sql.DB (c, counted in count).
type env struct {
	st          *storetest.Store
	c           *ent.Client
	count       *storetest.Counter
	nextReq     int
	nextSession int
}

func newEnv(t testing.TB) *env {
	t.Helper()
	st := storetest.New(t)
	counted, count := st.Counting()
	return &env{st: st, c: counted.Client, count: count}
}

func (e *env) workspace(t testing.TB, id string) {
	t.Helper()
	e.st.Workspace(storetest.Workspace{ID: id, Name: id, RootPath: "/tmp/" + id})
}

// sessions stores sessions titled "title <id>", each created after the
// sessions stored before it.
func (e *env) sessions(t testing.TB, ws string, ids ...string) {
	t.Helper()
	specs := make([]storetest.Session, len(ids))
	for i, id := range ids {
		e.nextSession++
		specs[i] = storetest.Session{ID: id, Workspace: ws, Title: "title " + id,
			CreatedAt: storetest.SeedTime().Add(time.Duration(e.nextSession) * time.Millisecond)}
	}
	e.st.Sessions(specs...)
}

// edge is a lineage row: child forked from parent at time at.
type edge struct {
	parent, child string
	at            int64
}

func (e *env) forks(t testing.TB, ws string, edges ...edge) {
	t.Helper()
	rows := make([]storetest.Fork, len(edges))
	for i, f := range edges {
		e.nextReq++
		rows[i] = storetest.Fork{Workspace: ws, Parent: f.parent, Child: f.child,
			RequestID: fmt.Sprintf("req-%d", e.nextReq), At: f.at}
	}
	e.st.Forks(rows...)
}

func ids(ss []*ent.AgentSession) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.ID
	}
	return out
}

// sampleTree builds, in workspace w:
//
//	root
//	├── a    (t=10)
//	│   ├── a1 (t=30)
//	│   └── a2 (t=40)
//	├── b    (t=20)
//	│   └── b1 (t=50)
//	└── c    (t=25)
//
// inserting the rows out of time order, plus an unrelated tree (other ->
// other1) in w and a tree in workspace w2.
func sampleTree(t *testing.T) *env {
	e := newEnv(t)
	e.workspace(t, "w")
	e.workspace(t, "w2")
	e.sessions(t, "w", "root", "a", "b", "c", "a1", "a2", "b1", "other", "other1")
	e.sessions(t, "w2", "x", "x1")
	e.forks(t, "w",
		edge{"root", "c", 25},
		edge{"a", "a2", 40},
		edge{"root", "b", 20},
		edge{"b", "b1", 50},
		edge{"root", "a", 10},
		edge{"a", "a1", 30},
		edge{"other", "other1", 5},
	)
	e.forks(t, "w2", edge{"x", "x1", 1})
	return e
}

func TestParentLookupReturnsAllDirectForks(t *testing.T) {
	t.Parallel()
	e := sampleTree(t)
	ctx := context.Background()
	for _, tc := range []struct {
		ws, id string
		want   []string
	}{
		{"w", "root", []string{"a", "b", "c"}}, // oldest first, no grandchildren
		{"w", "a", []string{"a1", "a2"}},
		{"w", "b", []string{"b1"}},
		{"w", "c", []string{}},
		{"w", "missing", []string{}},
		{"w2", "root", []string{}}, // lineage is per workspace
		{"w2", "x", []string{"x1"}},
	} {
		t.Run(tc.ws+"/"+tc.id, func(t *testing.T) {
			got, err := lineage.Children(ctx, e.c, tc.ws, tc.id)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ids(got), tc.want) {
				t.Fatalf("Children = %v, want %v", ids(got), tc.want)
			}
			for _, s := range got {
				if s == nil || s.Title != "title "+s.ID {
					t.Fatalf("child not loaded whole: %+v", s)
				}
			}
		})
	}
}

// TestChildrenSameTimeOldestRowFirst: forks in the same millisecond keep
// the order they were recorded in.
func TestChildrenSameTimeOldestRowFirst(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.workspace(t, "w")
	e.sessions(t, "w", "p", "z", "m", "a")
	e.forks(t, "w", edge{"p", "z", 7}, edge{"p", "m", 7}, edge{"p", "a", 7})
	got, err := lineage.Children(context.Background(), e.c, "w", "p")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"z", "m", "a"}; !slices.Equal(ids(got), want) {
		t.Fatalf("Children = %v, want %v", ids(got), want)
	}
}

// chain builds s0 <- s1 <- ... <- s<depth> in workspace w.
func chain(t *testing.T, e *env, prefix string, depth int) []string {
	t.Helper()
	names := make([]string, depth+1)
	for i := range names {
		names[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	e.sessions(t, "w", names...)
	var edges []edge
	for i := 1; i <= depth; i++ {
		edges = append(edges, edge{names[i-1], names[i], int64(i)})
	}
	e.forks(t, "w", edges...)
	return names
}

func TestAncestorsRootFirst(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.workspace(t, "w")
	names := chain(t, e, "s", 5)
	ctx := context.Background()
	for i, id := range names {
		got, err := lineage.Ancestors(ctx, e.c, "w", id)
		if err != nil {
			t.Fatal(err)
		}
		if want := names[:i]; !slices.Equal(ids(got), want) {
			t.Errorf("Ancestors(%s) = %v, want %v", id, ids(got), want)
		}
		if got == nil {
			t.Errorf("Ancestors(%s) = nil, want an empty list", id)
		}
	}
	if got, err := lineage.Ancestors(ctx, e.c, "other-workspace", "s5"); err != nil || len(got) != 0 {
		t.Errorf("Ancestors in another workspace = %v, %v; want none", ids(got), err)
	}
}

type nodeView struct {
	id, parent string
	depth      int
}

func view(nodes []lineage.Node) []nodeView {
	out := make([]nodeView, len(nodes))
	for i, n := range nodes {
		out[i] = nodeView{n.Session.ID, n.ParentID, n.Depth}
	}
	return out
}

// checkPreorder verifies nodes are a depth-first (pre-order) walk of one
// tree: the first is the root at depth 0, and every other node's parent is
// on the path from the root to the node before it.
func checkPreorder(t *testing.T, nodes []nodeView) {
	t.Helper()
	var path []string
	for i, n := range nodes {
		if i == 0 {
			if n.depth != 0 || n.parent != "" {
				t.Fatalf("first node %+v is not a root", n)
			}
			path = []string{n.id}
			continue
		}
		for len(path) > 0 && path[len(path)-1] != n.parent {
			path = path[:len(path)-1]
		}
		if len(path) == 0 {
			t.Fatalf("node %d %+v: its parent is not an ancestor of the previous node; not depth-first: %v", i, n, nodes)
		}
		if n.depth != len(path) {
			t.Fatalf("node %+v: depth %d, want %d", n, n.depth, len(path))
		}
		path = append(path, n.id)
	}
}

func TestTreeFromAnyNode(t *testing.T) {
	t.Parallel()
	e := sampleTree(t)
	ctx := context.Background()
	want := []nodeView{
		{"root", "", 0},
		{"a", "root", 1},
		{"a1", "a", 2},
		{"a2", "a", 2},
		{"b", "root", 1},
		{"b1", "b", 2},
		{"c", "root", 1},
	}
	for _, from := range []string{"root", "a", "a1", "a2", "b", "b1", "c"} {
		t.Run(from, func(t *testing.T) {
			nodes, err := lineage.Tree(ctx, e.c, "w", from)
			if err != nil {
				t.Fatal(err)
			}
			got := view(nodes)
			if !slices.Equal(got, want) {
				t.Fatalf("Tree(%s) =\n%v\nwant\n%v", from, got, want)
			}
			checkPreorder(t, got)
			for _, n := range nodes {
				if n.Session.Title != "title "+n.Session.ID {
					t.Fatalf("session not loaded whole: %+v", n.Session)
				}
			}
		})
	}

	// A session without lineage is a tree of one; an unknown one is empty.
	e.sessions(t, "w", "alone")
	nodes, err := lineage.Tree(ctx, e.c, "w", "alone")
	if err != nil {
		t.Fatal(err)
	}
	if got := view(nodes); !slices.Equal(got, []nodeView{{"alone", "", 0}}) {
		t.Fatalf("Tree(alone) = %v", got)
	}
	nodes, err = lineage.Tree(ctx, e.c, "w", "missing")
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 0 {
		t.Fatalf("Tree(missing) = %v, want none", view(nodes))
	}
	// Other trees of the workspace, and other workspaces, stay out.
	nodes, err = lineage.Tree(ctx, e.c, "w", "other1")
	if err != nil {
		t.Fatal(err)
	}
	if got := view(nodes); !slices.Equal(got, []nodeView{{"other", "", 0}, {"other1", "other", 1}}) {
		t.Fatalf("Tree(other1) = %v", got)
	}
}

// TestTreeDepthFirstWithSameTimeSiblings: siblings forked in the same
// millisecond, one id a prefix of the other followed by a character that
// sorts before '/', must still come out depth-first (each subtree whole)
// and in the order Children gives.
func TestTreeDepthFirstWithSameTimeSiblings(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.workspace(t, "w")
	e.sessions(t, "w", "root", "fork", "fork-2", "fork.3", "kid", "grandkid")
	e.forks(t, "w",
		edge{"root", "fork", 100},
		edge{"root", "fork-2", 100},
		edge{"root", "fork.3", 100},
		edge{"fork", "kid", 200},
		edge{"kid", "grandkid", 300},
	)
	ctx := context.Background()
	nodes, err := lineage.Tree(ctx, e.c, "w", "grandkid")
	if err != nil {
		t.Fatal(err)
	}
	got := view(nodes)
	if len(got) != 6 {
		t.Fatalf("Tree = %v, want 6 nodes", got)
	}
	checkPreorder(t, got)
	children, err := lineage.Children(ctx, e.c, "w", "root")
	if err != nil {
		t.Fatal(err)
	}
	var siblings []string
	for _, n := range got {
		if n.parent == "root" {
			siblings = append(siblings, n.id)
		}
	}
	if !slices.Equal(siblings, ids(children)) {
		t.Fatalf("Tree orders root's children %v, Children orders them %v", siblings, ids(children))
	}
}

func TestParentAndForkedFrom(t *testing.T) {
	t.Parallel()
	e := sampleTree(t)
	ctx := context.Background()
	for _, tc := range []struct {
		ws, id, parent string
	}{
		{"w", "root", ""},
		{"w", "other", ""},
		{"w", "missing", ""},
		{"w", "a", "root"},
		{"w", "a1", "a"},
		{"w", "b1", "b"},
		{"w2", "x1", "x"},
		{"w2", "a", ""}, // lineage is per workspace
	} {
		t.Run(tc.ws+"/"+tc.id, func(t *testing.T) {
			p, err := lineage.Parent(ctx, e.c, tc.ws, tc.id)
			if err != nil {
				t.Fatal(err)
			}
			f, err := lineage.ForkedFrom(ctx, e.c, tc.ws, tc.id)
			if err != nil {
				t.Fatal(err)
			}
			if tc.parent == "" {
				if p != nil || f != nil {
					t.Fatalf("Parent = %v, ForkedFrom = %v; want nil for a root", p, f)
				}
				return
			}
			if p == nil || p.ID != tc.parent || p.Title != "title "+tc.parent {
				t.Fatalf("Parent = %+v, want %s", p, tc.parent)
			}
			if f == nil || f.ParentAgentSessionID != tc.parent || f.ChildAgentSessionID != tc.id ||
				f.ParentProviderSessionID != "thread-"+tc.parent || f.ChildProviderSessionID != "thread-"+tc.id ||
				f.WorkspaceID != tc.ws || f.Provider != agent.ProviderCodex {
				t.Fatalf("ForkedFrom = %+v", f)
			}
		})
	}
}

// bigTree builds a tree of n sessions in workspace w: a spine of depth
// n/4 with the other sessions hanging off it at varying depths. It returns
// the root and the deepest leaf.
func bigTree(t testing.TB, e *env, prefix string, n int) (root, leaf string) {
	t.Helper()
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%03d", prefix, i)
	}
	e.sessions(t, "w", names...)
	spine := max(n/4, 1)
	var edges []edge
	for i := 1; i < n; i++ {
		parent := names[i-1] // the spine
		if i > spine {
			parent = names[(i*7)%i] // earlier node: spine or a branch
		}
		edges = append(edges, edge{parent, names[i], int64(i)})
	}
	e.forks(t, "w", edges...)
	return names[0], names[spine]
}

// TestConstantQueries proves Ancestors and Tree cost the same number of SQL
// statements for a 3-node and a 200-node tree.
func TestConstantQueries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.workspace(t, "w")
	ctx := context.Background()

	type cost struct{ ancestors, tree, children, parent int64 }
	measure := func(prefix string, n int) cost {
		root, leaf := bigTree(t, e, prefix, n)
		var c cost
		e.count.Reset()
		anc, err := lineage.Ancestors(ctx, e.c, "w", leaf)
		if err != nil {
			t.Fatalf("Ancestors: %v", err)
		}
		c.ancestors = e.count.Reset()
		nodes, err := lineage.Tree(ctx, e.c, "w", leaf)
		if err != nil {
			t.Fatalf("Tree: %v", err)
		}
		c.tree = e.count.Reset()
		if _, err := lineage.Children(ctx, e.c, "w", root); err != nil {
			t.Fatalf("Children: %v", err)
		}
		c.children = e.count.Reset()
		if _, err := lineage.Parent(ctx, e.c, "w", leaf); err != nil {
			t.Fatalf("Parent: %v", err)
		}
		c.parent = e.count.Reset()

		if len(nodes) != n {
			t.Fatalf("%d-node tree: Tree returned %d nodes", n, len(nodes))
		}
		if len(anc) == 0 || anc[0].ID != root || anc[len(anc)-1].ID == leaf {
			t.Fatalf("%d-node tree: Ancestors(%s) = %v", n, leaf, ids(anc))
		}
		for _, node := range nodes {
			if node.Session.ID == leaf && node.Depth != len(anc) {
				t.Fatalf("%d-node tree: %s has depth %d but %d ancestors", n, leaf, node.Depth, len(anc))
			}
		}
		checkPreorder(t, view(nodes))
		return c
	}

	small := measure("small", 3)
	large := measure("large", 200)
	t.Logf("queries: 3 nodes %+v, 200 nodes %+v", small, large)
	if small != large {
		t.Fatalf("query counts differ with tree size: 3 nodes %+v, 200 nodes %+v", small, large)
	}
	if small.ancestors == 0 || small.tree == 0 {
		t.Fatalf("counted no queries (%+v): the counting driver is bypassed", small)
	}
	if small.ancestors > 2 || small.tree > 3 || small.children > 2 || small.parent > 2 {
		t.Fatalf("more queries than expected: %+v", small)
	}
}

// TestCorruptCycleTerminates: the constraints allow a cycle (a's parent b,
// b's parent a); the walks must still end and return each session once.
func TestCorruptCycleTerminates(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.workspace(t, "w")
	e.sessions(t, "w", "a", "b", "c", "d")
	e.forks(t, "w", edge{"b", "a", 1}, edge{"c", "b", 2}, edge{"a", "c", 3}, edge{"a", "d", 4})
	ctx := context.Background()
	anc, err := lineage.Ancestors(ctx, e.c, "w", "d")
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(anc); len(got) != 3 || slices.Contains(got, "d") {
		t.Fatalf("Ancestors(d) on a cycle = %v, want a, b, c once each", got)
	}
	nodes, err := lineage.Tree(ctx, e.c, "w", "d")
	if err != nil {
		t.Fatal(err)
	}
	got := view(nodes)
	if len(got) != 4 {
		t.Fatalf("Tree(d) on a cycle = %v, want the 4 sessions once each", got)
	}
	checkPreorder(t, got)
}

// TestOtherWorkspaceSessionIsNotReturned: asking a workspace about a
// session of another workspace returns nothing of it.
func TestOtherWorkspaceSessionIsNotReturned(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.workspace(t, "a")
	e.workspace(t, "b")
	e.sessions(t, "b", "in-b")
	ctx := context.Background()
	nodes, err := lineage.Tree(ctx, e.c, "a", "in-b")
	if err != nil || len(nodes) != 0 {
		t.Errorf("Tree(a, in-b) = %d nodes, %v", len(nodes), err)
	}
	anc, err := lineage.Ancestors(ctx, e.c, "a", "in-b")
	if err != nil || len(anc) != 0 {
		t.Errorf("Ancestors(a, in-b) = %v, %v", ids(anc), err)
	}
}
