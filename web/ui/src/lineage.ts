// Where forks happened, from a session's point of view.
import type { ForkMark } from "./Conversation";
import type { Detail, Summary, TurnInfo } from "./types";

// sameTree lists the other sessions of id's fork tree (those it can be
// compared with), in the order given.
export function sameTree(sessions: Summary[], id: string | undefined): Summary[] {
  if (!id) return [];
  const byId = new Map(sessions.map((s) => [s.id, s]));
  const rootOf = (sid: string): string => {
    let cur = byId.get(sid);
    const seen = new Set<string>();
    while (cur?.parent && byId.has(cur.parent.id) && !seen.has(cur.id)) {
      seen.add(cur.id);
      cur = byId.get(cur.parent.id);
    }
    return cur?.id ?? sid;
  };
  const root = rootOf(id);
  return sessions.filter((s) => s.id !== id && rootOf(s.id) === root);
}

// countDescendants counts the listed sessions forked, directly or not, from id.
export function countDescendants(sessions: Summary[], id: string | undefined): number {
  if (!id) return 0;
  const kids = new Map<string, string[]>();
  for (const s of sessions) if (s.parent) kids.set(s.parent.id, [...(kids.get(s.parent.id) ?? []), s.id]);
  let n = 0;
  const stack = [...(kids.get(id) ?? [])];
  while (stack.length) {
    const c = stack.pop()!;
    n++;
    stack.push(...(kids.get(c) ?? []));
  }
  return n;
}

// inheritedTurns are the turns a child got from its parent at the fork:
// Codex keeps a forked turn's id, so they are the child's turns that the
// parent has too (the parent's own, or what it inherited itself).
export function inheritedTurns(d: Detail): Set<string> {
  const out = new Set<string>();
  if (!d.parent || !d.forkedFrom) return out;
  const inParent = new Set(d.parent.turns.map((t) => t.id));
  for (const t of d.turns) if (inParent.has(t.id)) out.add(t.id);
  return out;
}

// forkMarks maps each turn of a parent that was forked from to its
// children (forkPoints). A whole-conversation fork is marked on the last
// turn that had started when it was made.
export function forkMarks(d: Detail): Map<string, ForkMark[]> {
  const out = new Map<string, ForkMark[]>();
  for (const fp of d.forkPoints) {
    for (const c of fp.children) {
      const turnId = fp.turnId ?? lastTurnAt(d.turns, c.forkedFrom?.forkedAtUnixMs);
      if (!turnId) continue;
      const list = out.get(turnId) ?? [];
      list.push({ id: c.id, displayTitle: c.displayTitle, status: c.status, archived: c.archived });
      out.set(turnId, list);
    }
  }
  return out;
}

function lastTurnAt(turns: TurnInfo[], atMs: number | undefined): string | undefined {
  let id: string | undefined;
  for (const t of turns) {
    if (atMs === undefined || Date.parse(t.startedAt) <= atMs) id = t.id;
  }
  return id;
}
