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
	byID := make(map[string]*ent.AgentSession, len(sessions))
	for _, s := range sessions {
		byID[s.ID] = s
	}
	children := make(map[string][]*ent.SessionFork)
	for _, f := range forks {
		children[f.ParentAgentSessionID] = append(children[f.ParentAgentSessionID], f)
	}
	for _, list := range children {
		slices.SortFunc(list, olderFirst)
	}

	// Without recursion: the stack holds the nodes still to visit, the
	// next one on top; a node's Session is a stub until it is visited.
	nodes := make([]Node, 0, len(sessions))
	visited := map[string]bool{}
	for _, root := range roots {
		stack := []Node{{Session: &ent.AgentSession{ID: root}}}
		for len(stack) > 0 {
			n := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			id := n.Session.ID
			s, ok := byID[id]
			if visited[id] || !ok {
				continue
			}
			visited[id] = true
			n.Session = s
			nodes = append(nodes, n)
			kids := children[id]
			for i := len(kids) - 1; i >= 0; i-- {
				stack = append(stack, Node{
					Session:  &ent.AgentSession{ID: kids[i].ChildAgentSessionID},
					ParentID: id,
					Depth:    n.Depth + 1,
					Fork:     kids[i],
				})
			}
		}
	}
	return nodes
}
