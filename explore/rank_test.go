package explore

import (
	"context"
	"testing"
	"time"

	"tuttid/ent"
	"tuttid/ent/checkrun"
	"tuttid/ent/turn"
)

// outcome sets how b's latest turn ended.
func outcome(b *Branch, st turn.Status) *Branch {
	b.LastTurn = st
	return b
}

func branchOf(name string, state BranchState, check checkrun.State, files, lines int, tokens int64, took time.Duration) *Branch {
	// Its latest turn completed unless the case says otherwise (outcome).
	b := &Branch{Row: &ent.ExplorationBranch{Name: name}, State: state, TokensUsed: tokens, Duration: took, LastTurn: turn.StatusCOMPLETED}
	if state == BranchRunning {
		b.LastTurn = turn.StatusIN_PROGRESS
	}
	if check != "" {
		b.Latest = &ent.CheckRun{State: check}
	}
	if files >= 0 {
		b.Changes = &Totals{Files: files, Added: lines}
	}
	return b
}

func TestRanking(t *testing.T) {
	tests := []struct {
		name     string
		branches []*Branch
		want     []string // ranking order
		unranked []string
	}{
		{"a passing check beats a smaller change", []*Branch{
			branchOf("small-fail", BranchIdle, checkrun.StateFailed, 1, 1, 10, time.Second),
			branchOf("big-pass", BranchIdle, checkrun.StatePassed, 9, 900, 900, time.Hour),
		}, []string{"big-pass", "small-fail"}, nil},
		{"not run or running sits between passed and failed", []*Branch{
			branchOf("failed", BranchIdle, checkrun.StateFailed, 1, 1, 1, 0),
			branchOf("timed-out", BranchIdle, checkrun.StateTimedOut, 1, 1, 1, 0),
			branchOf("running", BranchRunning, checkrun.StateRunning, 1, 1, 1, 0),
			branchOf("none", BranchIdle, "", 1, 1, 1, 0),
			branchOf("passed", BranchIdle, checkrun.StatePassed, 1, 1, 1, 0),
		}, []string{"passed", "none", "running", "failed", "timed-out"}, nil},
		{"then files, then lines, then tokens, then time, then the name", []*Branch{
			branchOf("e", BranchIdle, checkrun.StatePassed, 1, 5, 10, time.Second),
			branchOf("d", BranchIdle, checkrun.StatePassed, 1, 5, 10, time.Second),
			branchOf("c", BranchIdle, checkrun.StatePassed, 1, 5, 10, 2*time.Second),
			branchOf("b", BranchIdle, checkrun.StatePassed, 1, 5, 20, time.Second),
			branchOf("a", BranchIdle, checkrun.StatePassed, 1, 6, 1, time.Second),
			branchOf("z", BranchIdle, checkrun.StatePassed, 2, 1, 1, time.Second),
		}, []string{"d", "e", "c", "b", "a", "z"}, nil},
		{"unread changes after read ones", []*Branch{
			branchOf("unread", BranchIdle, checkrun.StatePassed, -1, 0, 0, 0),
			branchOf("read", BranchIdle, checkrun.StatePassed, 50, 5000, 0, 0),
		}, []string{"read", "unread"}, nil},
		{"failed and archived come last, unranked, in input order", []*Branch{
			branchOf("arch", BranchArchived, checkrun.StatePassed, 0, 0, 0, 0),
			branchOf("broken", BranchFailed, "", -1, 0, 0, 0),
			branchOf("ok", BranchIdle, checkrun.StateFailed, 3, 3, 3, 0),
		}, []string{"ok", "arch", "broken"}, []string{"arch", "broken"}},
		{"a branch whose turn failed or was interrupted, or that changed nothing, never ranks above one that did the work and passed", []*Branch{
			outcome(branchOf("model-500", BranchIdle, checkrun.StatePassed, 0, 0, 0, 0), turn.StatusFAILED),
			outcome(branchOf("cut", BranchIdle, checkrun.StatePassed, 0, 0, 0, 0), turn.StatusINTERRUPTED),
			outcome(branchOf("crash-before-model", BranchIdle, checkrun.StatePassed, 0, 0, 0, 0), ""),
			branchOf("nothing", BranchIdle, checkrun.StatePassed, 0, 0, 5, time.Second),
			branchOf("did-it", BranchIdle, checkrun.StatePassed, 3, 40, 900, time.Minute),
			branchOf("tried", BranchIdle, checkrun.StateFailed, 1, 1, 10, time.Second),
		}, []string{"did-it", "tried", "nothing", "crash-before-model", "cut", "model-500"}, nil},
		{"a stopped branch (never started, no change) comes last, unranked", []*Branch{
			branchOf("never", BranchStopped, "", 0, 0, 0, 0),
			branchOf("ran", BranchIdle, checkrun.StateFailed, 3, 3, 3, time.Second),
		}, []string{"ran", "never"}, []string{"never"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := &View{Exploration: &ent.Exploration{}, Branches: tt.branches}
			rank(v.Branches)
			var got []string
			ranking, err := v.Ranking(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range ranking {
				got = append(got, b.Row.Name)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("ranking %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("ranking %v, want %v", got, tt.want)
				}
			}
			unranked := map[string]bool{}
			for _, n := range tt.unranked {
				unranked[n] = true
			}
			for i, b := range ranking {
				switch {
				case unranked[b.Row.Name] && b.Rank != 0:
					t.Errorf("%s has rank %d, want none", b.Row.Name, b.Rank)
				case !unranked[b.Row.Name] && b.Rank != i+1:
					t.Errorf("%s has rank %d, want %d", b.Row.Name, b.Rank, i+1)
				}
			}
		})
	}
}
