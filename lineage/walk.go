package lineage

import (
	"slices"

	"tuttid/ent"
)

// walk lays out the trees under roots depth-first (pre-order), siblings
// oldest first, each session once: a corrupt cycle ends where it repeats.
// forks are the lineage rows among sessions; a session missing from
// sessions is left out with everything below it.
func walk(roots []string, sessions []*ent.AgentSession, forks []*ent.SessionFork) []Node {
	byID := make(map[string]int, len(sessions)) // index in sessions
	for i, s := range sessions {
		byID[s.ID] = i
	}
	children := make(map[string][]*ent.SessionFork)
	for _, f := range forks {
		children[f.ParentAgentSessionID] = append(children[f.ParentAgentSessionID], f)
	}
	for _, list := range children {
		slices.SortFunc(list, olderFirst)
	}

	// Without recursion: the stack holds the sessions still to visit, the
	// next one on top (ids, not Nodes with stub sessions: a stub
	// *ent.AgentSession per session was a fifth of Tree's allocations).
	type pending struct {
		id, parentID string
		depth        int
		fork         *ent.SessionFork
	}
	nodes := make([]Node, 0, len(sessions))
	visited := make([]bool, len(sessions))
	for _, root := range roots {
		stack := []pending{{id: root}}
		for len(stack) > 0 {
			p := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			i, ok := byID[p.id]
			if !ok || visited[i] {
				continue
			}
			visited[i] = true
			nodes = append(nodes, Node{Session: sessions[i], ParentID: p.parentID, Depth: p.depth, Fork: p.fork})
			kids := children[p.id]
			for i := len(kids) - 1; i >= 0; i-- {
				stack = append(stack, pending{
					id: kids[i].ChildAgentSessionID, parentID: p.id, depth: p.depth + 1, fork: kids[i],
				})
			}
		}
	}
	return nodes
}
