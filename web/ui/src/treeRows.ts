// The fork tree as rows: the forest walked in order, one row per session
// with what its treeitem says (level, place among its siblings, whether it
// has forks and is open, whether a collapsed ancestor hides it). The tree
// renders the rows flat, so that a change (a branch opened, a session
// renamed or selected) re-renders only the rows it changes.
import type { SessionSummaryFragment } from "./gql/graphql";

export interface TreeNode {
  s: SessionSummaryFragment;
  level: number;
  children: TreeNode[];
}

export interface TreeRow {
  s: SessionSummaryFragment;
  level: number;
  // aria-setsize and aria-posinset: the row among its siblings.
  setSize: number;
  posInSet: number;
  parentId?: string;
  firstChildId?: string;
  open: boolean;
  // hidden: inside a collapsed branch (in the page, not shown).
  hidden: boolean;
}

// buildForest nests each session under its parent (a session whose parent
// is not listed is a root). Given the forest built last, it hands back the
// nodes whose subtree shows the same (same sessions, titles, statuses,
// levels), so that the tree re-renders only the branches that changed.
export function buildForest(sessions: SessionSummaryFragment[], prev?: TreeNode[]): TreeNode[] {
  const byId = new Map<string, TreeNode>();
  for (const s of sessions) byId.set(s.id, { s, level: 1, children: [] });
  const roots: TreeNode[] = [];
  for (const s of sessions) {
    const n = byId.get(s.id)!;
    const p = s.parent ? byId.get(s.parent.id) : undefined;
    if (p) p.children.push(n);
    else roots.push(n);
  }
  // Levels iteratively: a chain of forks can be deeper than a stack likes.
  const order: TreeNode[] = [];
  const stack: TreeNode[] = [...roots];
  while (stack.length) {
    const n = stack.pop()!;
    order.push(n);
    for (const c of n.children) {
      c.level = n.level + 1;
      stack.push(c);
    }
  }
  if (!prev) return roots;
  const old = new Map<string, TreeNode>();
  const walk: TreeNode[] = [...prev];
  while (walk.length) {
    const n = walk.pop()!;
    old.set(n.s.id, n);
    walk.push(...n.children);
  }
  // Children before parents (order is parents first), so a parent sees
  // which of its children were kept.
  const kept = new Map<TreeNode, TreeNode>();
  const final = (n: TreeNode) => kept.get(n) ?? n;
  for (let i = order.length - 1; i >= 0; i--) {
    const n = order[i];
    n.children = n.children.map(final);
    const o = old.get(n.s.id);
    if (o && sameNode(o, n)) kept.set(n, o);
  }
  return roots.map(final);
}

function sameNode(a: TreeNode, b: TreeNode): boolean {
  return (
    a.level === b.level &&
    a.s.displayTitle === b.s.displayTitle &&
    a.s.status === b.s.status &&
    a.s.archived === b.s.archived &&
    a.children.length === b.children.length &&
    a.children.every((c, i) => c === b.children[i])
  );
}

// treeRows walks the forest in document order; collapsed holds the ids of
// the closed branches.
export function treeRows(forest: TreeNode[], collapsed: ReadonlySet<string>): TreeRow[] {
  const rows: TreeRow[] = [];
  type Frame = { nodes: TreeNode[]; i: number; parentId?: string; hidden: boolean };
  const stack: Frame[] = [{ nodes: forest, i: 0, hidden: false }];
  while (stack.length) {
    const f = stack[stack.length - 1];
    if (f.i >= f.nodes.length) {
      stack.pop();
      continue;
    }
    const n = f.nodes[f.i++];
    const open = n.children.length > 0 && !collapsed.has(n.s.id);
    rows.push({
      s: n.s,
      level: n.level,
      setSize: f.nodes.length,
      posInSet: f.i,
      parentId: f.parentId,
      firstChildId: n.children[0]?.s.id,
      open,
      hidden: f.hidden,
    });
    if (n.children.length) stack.push({ nodes: n.children, i: 0, parentId: n.s.id, hidden: f.hidden || !open });
  }
  return rows;
}
