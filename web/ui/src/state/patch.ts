// Putting a session as an activity event carried it into what the page
// holds, in place, without reading it again: the listed sessions (not
// every page again) and the shown session's fork marks.
import type { ListedSessionFragment, SessionHeadFragment, SessionSummaryFragment } from "../gql/graphql";

// patchList returns the list with s in place of the listed session of its
// id, or null when only a reload is right: s is not listed, or it was
// archived, restored or moved to another parent (which changes other rows
// or the list's membership too). What the listed row has beyond the
// summary an event carries (its code) is kept until the next reload.
export function patchList<T extends SessionSummaryFragment>(list: readonly T[], s: SessionSummaryFragment): T[] | null {
  const i = list.findIndex((x) => x.id === s.id);
  if (i < 0 || list[i].archived !== s.archived || list[i].parent?.id !== s.parent?.id) return null;
  const next = list.slice();
  next[i] = { ...list[i], ...s };
  return next;
}

// reapply puts the patches that arrived while a reload read the list onto
// what it read (which may predate them); a patch that no longer fits is
// left out (the reload has the newer row).
export function reapply<T extends SessionSummaryFragment>(list: T[], patches: ReadonlyMap<string, SessionSummaryFragment>): T[] {
  let out = list;
  for (const s of patches.values()) out = patchList(out, s) ?? out;
  return out;
}

// withForkChild: head with the fork s's title, status and archived state
// in its fork marks; head itself when s is none of its forks.
export function withForkChild(head: SessionHeadFragment, s: SessionSummaryFragment): SessionHeadFragment {
  let found = false;
  const forkPoints = head.forkPoints.map((fp) => {
    if (!fp.children.some((c) => c.id === s.id)) return fp;
    found = true;
    return { ...fp, children: fp.children.map((c) => (c.id === s.id ? { ...c, displayTitle: s.displayTitle, status: s.status, archived: s.archived } : c)) };
  });
  return found ? { ...head, forkPoints } : head;
}

// listable: whether the workspace's list shows s (the server's filter:
// visible ones, archived ones only when asked for).
export function listable(s: Pick<ListedSessionFragment, "archived"> & { visible: boolean }, showArchived: boolean): boolean {
  return s.visible && (showArchived || !s.archived);
}

// insertRow returns the list with s (not listed) where the server lists
// it: oldest first, by creation time, then id.
export function insertRow<T extends Pick<SessionSummaryFragment, "id" | "createdAt">>(list: readonly T[], s: T): T[] {
  const at = timeKey(s.createdAt);
  const after = (x: T) => {
    const t = timeKey(x.createdAt);
    return t[0] > at[0] || (t[0] === at[0] && (t[1] > at[1] || (t[1] === at[1] && x.id > s.id)));
  };
  const i = list.findIndex(after);
  const next = list.slice();
  next.splice(i < 0 ? list.length : i, 0, s);
  return next;
}

// timeKey orders RFC 3339 times to the nanosecond, as the server keys
// sessions (Date.parse keeps milliseconds): the time to the second, then
// the fraction's nine digits.
function timeKey(t: string): [number, string] {
  const m = /^([^.]*?)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/.exec(t);
  if (!m) return [Date.parse(t), ""];
  return [Date.parse(m[1] + m[3]), (m[2] ?? "").padEnd(9, "0")];
}

// withNewForkChild: head with the new fork s in the marks of the turn it
// was forked from (the last of that turn's children, as the server lists
// them, oldest first); null when head has no mark there yet (the server
// places a new fork point among the others: read the head again). s
// already marked takes its place.
export function withNewForkChild(head: SessionHeadFragment, s: SessionSummaryFragment): SessionHeadFragment | null {
  if (s.parent?.id !== head.id || !s.forkedFrom) return null;
  const turnId = s.forkedFrom.lastTurnId ?? null;
  const i = head.forkPoints.findIndex((fp) => (fp.turnId ?? null) === turnId);
  if (i < 0) return null;
  const fp = head.forkPoints[i];
  const child = { id: s.id, displayTitle: s.displayTitle, status: s.status, archived: s.archived, forkedFrom: { forkedAtUnixMs: s.forkedFrom.forkedAtUnixMs } };
  const children = fp.children.some((c) => c.id === s.id) ? fp.children.map((c) => (c.id === s.id ? { ...c, ...child } : c)) : [...fp.children, child];
  const forkPoints = head.forkPoints.slice();
  forkPoints[i] = { ...fp, children };
  return { ...head, forkPoints };
}
