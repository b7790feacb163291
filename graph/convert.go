package graph

import (
	"encoding/json"

	"tuttid/ent"
	"tuttid/ent/approvalrequest"
	"tuttid/graph/model"
	"tuttid/lineage"
	"tuttid/paging"
)

// Every conversion between the services' types and the GraphQL model is
// here, so that a resolver is a call and a conversion.

// edges gives each node of a page its edge, with the node's cursor: the
// one loop every connection is built with.
func edges[N, E any](p paging.Page[N], edge func(cursor string, node N) E) []E {
	out := make([]E, len(p.Nodes))
	for i, n := range p.Nodes {
		out[i] = edge(p.Cursors[i], n)
	}
	return out
}

func sessionEdge(cursor string, n *ent.AgentSession) *model.AgentSessionEdge {
	return &model.AgentSessionEdge{Cursor: cursor, Node: n}
}

func turnEdge(cursor string, n *ent.Turn) *model.TurnEdge {
	return &model.TurnEdge{Cursor: cursor, Node: n}
}

func messageEdge(cursor string, n *ent.Message) *model.MessageEdge {
	return &model.MessageEdge{Cursor: cursor, Node: n}
}

func pageInfo[T any](p paging.Page[T]) *model.PageInfo {
	pi := &model.PageInfo{HasNextPage: p.HasNextPage, HasPreviousPage: p.HasPreviousPage}
	if n := len(p.Cursors); n > 0 {
		pi.StartCursor, pi.EndCursor = &p.Cursors[0], &p.Cursors[n-1]
	}
	return pi
}

func treeNodes(nodes []lineage.Node) []*model.ForkTreeNode {
	out := make([]*model.ForkTreeNode, 0, len(nodes))
	for _, n := range nodes {
		out = append(out, &model.ForkTreeNode{Session: n.Session, ParentID: optional(n.ParentID), Depth: n.Depth})
	}
	return out
}

func forkPoints(points []lineage.ForkPoint) []*lineage.ForkPoint {
	out := make([]*lineage.ForkPoint, len(points))
	for i := range points {
		out[i] = &points[i]
	}
	return out
}

func approvalDecisions(ds []string) []model.ApprovalDecision {
	out := make([]model.ApprovalDecision, 0, len(ds))
	for _, d := range ds {
		out = append(out, model.ApprovalDecision(d))
	}
	return out
}

func approvalDecision(d *approvalrequest.Decision) *model.ApprovalDecision {
	if d == nil {
		return nil
	}
	v := model.ApprovalDecision(*d)
	return &v
}

// jsonValue returns stored JSON for a JSON field: {} when empty.
func jsonValue(raw json.RawMessage) any {
	if len(raw) == 0 {
		return map[string]any{}
	}
	return raw
}

// jsonObject is a decoded JSON object for a JSON field: {} when nil.
func jsonObject(m map[string]any) any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// rawJSON encodes a JSON input value (nil stays nil).
func rawJSON(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// optional is an empty string as null.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
