package graph

import (
	"tuttid/graph/model"
	"tuttid/lineage"
	"tuttid/paging"
)

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

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
