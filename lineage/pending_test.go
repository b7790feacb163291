package lineage_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"tuttid/ent/turn"
	"tuttid/lineage"
	"tuttid/store/storetest"
)

// withPending gives a session turns in that order (started a minute
// apart); an id with lineage.PendingTurnPrefix is stored as a turn still
// starting (IN_PROGRESS), as session stores one before turn/start answers.
func (e *env) withPending(t testing.TB, sessionID string, turnIDs ...string) {
	t.Helper()
	turns := make([]storetest.Turn, len(turnIDs))
	for i, id := range turnIDs {
		turns[i] = storetest.Turn{ID: id}
		if lineage.IsPendingTurn(id) {
			turns[i].Status = turn.StatusIN_PROGRESS
		}
	}
	e.st.Turns(sessionID, turns...)
}

// TestCompareLeavesOutPendingTurns: a turn stored pending is no turn of
// either side (its id vanishes when Codex names the turn), wherever it
// sits among the others.
func TestCompareLeavesOutPendingTurns(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.workspace(t, "w")
	e.sessions(t, "w", "root", "c", "whole", "fresh", "mid")
	e.withPending(t, "root", "t1", "t2", "pending:r")
	e.withPending(t, "c", "t1", "pending:c")
	e.withPending(t, "whole", "t1", "t2", "w1")
	e.withPending(t, "fresh", "pending:f")
	e.withPending(t, "mid", "t1", "pending:m", "t2", "m1") // started out of the usual order
	e.forkAt(t, "w", "root", "c", "t1", 10)
	e.forkAt(t, "w", "root", "whole", "", 20)
	e.forkAt(t, "w", "root", "fresh", "", 30)
	e.forkAt(t, "w", "root", "mid", "", 40)
	ctx := context.Background()
	for _, tc := range []struct {
		a, b                 string
		shared, aOnly, bOnly []string
	}{
		{"root", "c", []string{"t1"}, []string{"t2"}, []string{}},
		{"c", "root", []string{"t1"}, []string{}, []string{"t2"}},
		{"root", "whole", []string{"t1", "t2"}, []string{}, []string{"w1"}},
		{"fresh", "root", []string{}, []string{}, []string{"t1", "t2"}},
		{"fresh", "fresh", []string{}, []string{}, []string{}},
		{"mid", "whole", []string{"t1", "t2"}, []string{"m1"}, []string{"w1"}},
	} {
		t.Run(tc.a+"-"+tc.b, func(t *testing.T) {
			got, err := lineage.Compare(ctx, e.c, e.get(t, tc.a), e.get(t, tc.b))
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				what      string
				got, want []string
			}{{"Shared", turnIDs(got.SharedTurns), tc.shared}, {"AOnly", turnIDs(got.AOnly), tc.aOnly}, {"BOnly", turnIDs(got.BOnly), tc.bOnly}} {
				if !slices.Equal(c.got, c.want) {
					t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
				}
			}
		})
	}
}

// TestForkPointsIgnorePendingTurns: a pending turn has no place in the
// conversation's order; a fork row naming one (a fork refuses a running
// turn, so only a damaged or hand-made row does) ranks like a fork from a
// turn the session does not have: after the turns it has, children kept.
func TestForkPointsIgnorePendingTurns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	type pv struct{ turn, kids string }
	for _, tc := range []struct {
		name  string
		turns []string
		forks [][2]string // child, turn
		want  []pv
	}{
		{"pending last", []string{"t1", "t2", "pending:x"},
			[][2]string{{"a", "t2"}, {"b", "t1"}},
			[]pv{{"t1", "[b]"}, {"t2", "[a]"}}},
		{"pending between", []string{"t1", "pending:x", "t2"},
			[][2]string{{"a", "t2"}, {"b", "pending:x"}, {"c", ""}},
			[]pv{{"t2", "[a]"}, {"pending:x", "[b]"}, {"", "[c]"}}},
		{"pending first", []string{"pending:x", "t1"},
			[][2]string{{"b", "pending:x"}, {"a", "t1"}, {"c", "t9"}},
			[]pv{{"t1", "[a]"}, {"pending:x", "[b]"}, {"t9", "[c]"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.workspace(t, "w")
			e.sessions(t, "w", "p", "a", "b", "c")
			e.withPending(t, "p", tc.turns...)
			for i, f := range tc.forks {
				e.forkAt(t, "w", "p", f[0], f[1], int64(10*(i+1)))
			}
			points, err := lineage.ForkPoints(ctx, e.c, "w", "p")
			if err != nil {
				t.Fatal(err)
			}
			var got []pv
			for _, p := range points {
				got = append(got, pv{p.TurnID, fmt.Sprint(ids(p.Children))})
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("ForkPoints = %v, want %v", got, tc.want)
			}
		})
	}
}
