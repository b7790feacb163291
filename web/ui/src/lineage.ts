// Where forks happened, from a session's point of view.
import type { ForkMark } from "./Conversation";
import type { Detail, TurnInfo } from "./types";

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
// children. A whole-conversation fork is marked on the last turn that had
// started when it was made.
export function forkMarks(d: Detail): Map<string, ForkMark[]> {
  const out = new Map<string, ForkMark[]>();
  const add = (turnId: string | undefined, c: ForkMark) => {
    if (!turnId) return;
    const list = out.get(turnId) ?? [];
    list.push(c);
    out.set(turnId, list);
  };
  for (const c of d.children) {
    const mark = { id: c.id, displayTitle: c.displayTitle, status: c.status };
    let turnId = c.forkedFrom?.lastTurnId ?? undefined;
    if (!turnId) turnId = lastTurnAt(d.turns, c.forkedFrom?.forkedAtUnixMs);
    add(turnId, mark);
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
