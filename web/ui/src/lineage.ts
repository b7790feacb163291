// Where forks happened, from a session's point of view.
import type { ForkChildFragment, SessionHeadFragment, SessionSummaryFragment, TurnFieldsFragment } from "./gql/graphql";

// The fields the functions read, so a test can build a session or a turn
// with those alone.
type Linked = Pick<SessionSummaryFragment, "id" | "parent">;
type Turn = Pick<TurnFieldsFragment, "id" | "startedAt">;

// sameTree lists the other sessions of id's fork tree (those it can be
// compared with), in the order given.
export function sameTree<S extends Linked>(sessions: S[], id: string | undefined): S[] {
  if (!id) return [];
  const byId = new Map(sessions.map((s) => [s.id, s]));
  // Each session's root, remembered for every session on the way up: one
  // walk per branch, not one per session (1,000 sessions, 50 deep).
  const roots = new Map<string, string>();
  const rootOf = (sid: string): string => {
    let cur = byId.get(sid);
    const path: string[] = [];
    const seen = new Set<string>();
    let root: string | undefined;
    while (cur?.parent && byId.has(cur.parent.id) && !seen.has(cur.id)) {
      root = roots.get(cur.id);
      if (root !== undefined) break;
      seen.add(cur.id);
      path.push(cur.id);
      cur = byId.get(cur.parent.id);
    }
    root ??= roots.get(cur?.id ?? sid) ?? cur?.id ?? sid;
    for (const id of path) roots.set(id, root);
    return root;
  };
  const root = rootOf(id);
  return sessions.filter((s) => s.id !== id && rootOf(s.id) === root);
}

// countDescendants counts the listed sessions forked, directly or not, from id.
export function countDescendants(sessions: Linked[], id: string | undefined): number {
  if (!id) return 0;
  const kids = new Map<string, string[]>();
  for (const s of sessions) {
    if (!s.parent) continue;
    const list = kids.get(s.parent.id);
    if (list) list.push(s.id);
    else kids.set(s.parent.id, [s.id]);
  }
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
// they were stored with the child, so they started no later than it was
// created, and its own turns after (a page of turns does not hold the
// parent's, so their ids cannot be compared).
export function inheritedTurns(d: Pick<SessionHeadFragment, "parent" | "forkedFrom" | "createdAt">, turns: Turn[]): Set<string> {
  const out = new Set<string>();
  if (!d.parent || !d.forkedFrom) return out;
  const created = Date.parse(d.createdAt);
  for (const t of turns) if (Date.parse(t.startedAt) <= created) out.add(t.id);
  return out;
}

// forkMarks maps each shown turn of a parent that was forked from to its
// children (forkPoints). A whole-conversation fork is marked on the last
// turn that had started when it was made (turns are a contiguous run of
// the latest, so that turn is shown when any later one is).
export function forkMarks(d: Pick<SessionHeadFragment, "forkPoints">, turns: Turn[]): Map<string, ForkChildFragment[]> {
  const out = new Map<string, ForkChildFragment[]>();
  for (const fp of d.forkPoints) {
    for (const c of fp.children) {
      const turnId = fp.turnId ?? lastTurnAt(turns, c.forkedFrom?.forkedAtUnixMs);
      if (!turnId) continue;
      const list = out.get(turnId) ?? [];
      list.push(c);
      out.set(turnId, list);
    }
  }
  return out;
}

// mergeLatest puts a fresh latest page of turns in place of the turns it
// covers; earlier turns loaded before it are kept (kept says how many).
// A page that shares no turn with what is loaded replaces it all.
export function mergeLatest<T extends { id: string }>(loaded: T[], page: T[]): { turns: T[]; kept: number } {
  if (page.length === 0) return { turns: page, kept: 0 };
  const i = loaded.findIndex((t) => t.id === page[0].id);
  if (i < 0) return { turns: page, kept: 0 };
  return { turns: [...loaded.slice(0, i), ...page], kept: i };
}

// prependEarlier puts an earlier page before the loaded turns, leaving out
// the turns loaded already.
export function prependEarlier<T extends { id: string }>(loaded: T[], older: T[]): T[] {
  return [...older.filter((o) => !loaded.some((t) => t.id === o.id)), ...loaded];
}

function lastTurnAt(turns: Turn[], atMs: number | undefined): string | undefined {
  let id: string | undefined;
  for (const t of turns) {
    if (atMs === undefined || Date.parse(t.startedAt) <= atMs) id = t.id;
  }
  return id;
}
