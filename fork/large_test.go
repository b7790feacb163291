package fork_test

import (
	"fmt"
	"testing"

	"tuttid/agent"
	"tuttid/agent/agenttest"
	"tuttid/ent/turn"
	"tuttid/store/storetest"
)

// TestForkLargeHistory forks sessions whose history is far past what one
// SQLite statement can bind (32766 parameters: about 2,700 message rows),
// from provider turns and by the parent-cache fallback.
func TestForkLargeHistory(t *testing.T) {
	t.Parallel()
	const turns, perTurn = 1200, 4 // 4,800 messages
	providerTurns := make([]agent.RuntimeTurn, turns)
	seedTurns := make([]storetest.Turn, turns)
	for i := range providerTurns {
		id := fmt.Sprintf("t%04d", i)
		rt := agent.RuntimeTurn{ID: id, Status: agent.TurnCompleted}
		st := storetest.Turn{ID: id, Status: turn.StatusCOMPLETED}
		for j := 0; j < perTurn; j++ {
			mid := fmt.Sprintf("%s-%d", id, j)
			rt.Messages = append(rt.Messages, agent.RuntimeMessage{ID: mid, Role: "tool", Kind: "commandExecution", Text: "ok", Status: "completed"})
			st.Messages = append(st.Messages, storetest.Message{ID: mid, Role: "tool", Text: "ok"})
		}
		providerTurns[i], seedTurns[i] = rt, st
	}
	for _, tc := range []struct {
		name    string
		history bool
	}{{"provider turns", true}, {"parent cache fallback", false}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			p := defaultParent()
			p.Turns = seedTurns
			e.st.Session(p)
			if tc.history {
				e.rt.ScriptForks(agenttest.ForkAnswer{Result: agent.RuntimeForkResult{
					Session: agent.RuntimeSession{ThreadID: "thread-big"}, History: agent.SliceHistory(providerTurns, 100),
				}})
			}
			res := e.mustFork(input("big"))
			msgs := e.messages(res.Session.ID)
			if len(msgs) != turns*perTurn || msgs[0].Version != 1 || msgs[len(msgs)-1].Version != turns*perTurn {
				t.Fatalf("child has %d messages (versions %d..%d), want %d", len(msgs), msgs[0].Version, msgs[len(msgs)-1].Version, turns*perTurn)
			}
			if n := len(e.turns(res.Session.ID)); n != turns {
				t.Errorf("child has %d turns, want %d", n, turns)
			}
		})
	}
}
