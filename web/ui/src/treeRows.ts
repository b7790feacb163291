// The fork tree as rows: the forest walked in order, one row per session
// with what its treeitem says (level, place among its siblings, whether it
// has forks and is open, whether a collapsed ancestor hides it). The tree
// renders the rows flat, so that a change (a branch opened, a session
// renamed or selected) re-renders only the rows it changes.
import type { ListedSessionFragment, SessionSummaryFragment } from "./gql/graphql";
import { sameTreeCode } from "./state/code";
import { reasonOf } from "./state/availability";

// TreeSession is a listed session: its summary, and its code when the
// list read it (the tree shows its own worktree and its changed files).
export type TreeSession = SessionSummaryFragment & { code?: ListedSessionFragment["code"] };

export interface TreeNode {
  s: TreeSession;
  level: number;
  children: TreeNode[];
}

export interface TreeRow {
  s: TreeSession;
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
// code badges, levels), so that the tree re-renders only the branches that changed; when
// the sessions and their parents are those of the last build (a session
// patched from an activity event), only the changed sessions' branches are
// built again.
export function buildForest(sessions: TreeSession[], prev?: TreeNode[]): TreeNode[] {
  const last = prev && built.get(prev);
  const roots = last && sameShape(last.sessions, sessions) ? rebuildChanged(prev, last, sessions) : buildAll(sessions, prev);
  return roots;
}

// nodeIndex is a forest's nodes by session id (built with it).
export function nodeIndex(forest: TreeNode[]): ReadonlyMap<string, TreeNode> {
  let b = built.get(forest);
  if (!b) {
    const byId = new Map<string, TreeNode>();
    const stack = [...forest];
    while (stack.length) {
      const n = stack.pop()!;
      byId.set(n.s.id, n);
      stack.push(...n.children);
    }
    b = { sessions: [], byId };
    built.set(forest, b);
  }
  return b.byId;
}

// shownIn says whether id's treeitem is shown: listed, and no ancestor of
// it collapsed.
export function shownIn(byId: ReadonlyMap<string, TreeNode>, collapsed: ReadonlySet<string>, id: string | undefined): boolean {
  const n = id === undefined ? undefined : byId.get(id);
  if (!n) return false;
  for (let p = n.s.parent ? byId.get(n.s.parent.id) : undefined; p; p = p.s.parent ? byId.get(p.s.parent.id) : undefined) {
    if (collapsed.has(p.s.id)) return false;
  }
  return true;
}

// What a build leaves for the next: the sessions it was given and its nodes
// by id.
interface Built {
  sessions: TreeSession[];
  byId: Map<string, TreeNode>;
}

const built = new WeakMap<TreeNode[], Built>();

function sameShape(a: TreeSession[], b: TreeSession[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== b[i] && (a[i].id !== b[i].id || a[i].parent?.id !== b[i].parent?.id)) return false;
  }
  return true;
}

function rebuildChanged(prev: TreeNode[], last: Built, sessions: TreeSession[]): TreeNode[] {
  const byId = last.byId;
  const parentOf = (n: TreeNode) => (n.s.parent ? byId.get(n.s.parent.id) : undefined);
  // The changed nodes and every ancestor of theirs, each built anew below,
  // deepest first so that a parent takes its children as built.
  const dirty = new Set<TreeNode>();
  const renewed = new Map<string, TreeNode>();
  for (let i = 0; i < sessions.length; i++) {
    const s = sessions[i];
    if (s === last.sessions[i]) continue;
    const old = byId.get(s.id)!;
    if (old.s.displayTitle === s.displayTitle && old.s.status === s.status && old.s.archived === s.archived && sameTreeCode(old.s, s) && reasonOf(old.s) === reasonOf(s)) continue;
    renewed.set(s.id, { ...old, s });
    for (let p = parentOf(old); p && !dirty.has(p); p = parentOf(p)) dirty.add(p);
  }
  if (renewed.size === 0) {
    built.set(prev, { sessions, byId });
    return prev;
  }
  const next = new Map(byId);
  for (const [id, n] of renewed) next.set(id, n);
  const ancestors = [...dirty].sort((a, b) => b.level - a.level);
  for (const a of ancestors) {
    const cur = next.get(a.s.id)!;
    next.set(a.s.id, { ...cur, children: cur.children.map((c) => next.get(c.s.id)!) });
  }
  const roots = prev.map((r) => next.get(r.s.id)!);
  built.set(roots, { sessions, byId: next });
  return roots;
}

function buildAll(sessions: TreeSession[], prev?: TreeNode[]): TreeNode[] {
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
  const old = prev ? built.get(prev)?.byId : undefined;
  if (!old) {
    built.set(roots, { sessions, byId });
    return roots;
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
  const out = roots.map(final);
  const finalById = new Map<string, TreeNode>();
  for (const n of order) finalById.set(n.s.id, final(n));
  built.set(out, { sessions, byId: finalById });
  return out;
}

function sameNode(a: TreeNode, b: TreeNode): boolean {
  return (
    a.level === b.level &&
    a.s.displayTitle === b.s.displayTitle &&
    a.s.status === b.s.status &&
    a.s.archived === b.s.archived &&
    sameTreeCode(a.s, b.s) &&
    reasonOf(a.s) === reasonOf(b.s) &&
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
