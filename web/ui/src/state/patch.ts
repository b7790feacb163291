// Putting a session as an activity event carried it into what the page
// holds, in place, without reading it again: the listed sessions (not
// every page again) and the shown session's fork marks.
import type { SessionHeadFragment, SessionSummaryFragment } from "../gql/graphql";

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
