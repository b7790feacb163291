// The shown workspace's sessions (all pages), archived ones when asked for,
// each with what the tree shows of its code.
import { startTransition, useCallback, useMemo, useRef, useState } from "react";
import { query } from "../client";
import { ListedSessionRowDocument, WorkspaceSessionsDocument, type ListedSessionFragment, type SessionSummaryFragment } from "../gql/graphql";
import { coalesce } from "./coalesce";
import { insertRow, listable, patchList, reapply } from "./patch";
import { unchangedRows } from "./unchanged";

export function useSessionList(currentWs: () => string | undefined) {
  const [sessions, setSessions] = useState<ListedSessionFragment[]>([]);
  const [showArchived, setShowArchivedState] = useState(false);
  const archivedRef = useRef(showArchived);
  archivedRef.current = showArchived;

  const refresh = useMemo(
    () =>
      coalesce(async () => {
        const ws = currentWs();
        if (!ws) return;
        const meanwhile = new Map<string, SessionSummaryFragment>();
        duringReload.current = meanwhile;
        const all: ListedSessionFragment[] = [];
        try {
          let after: string | null | undefined;
          for (;;) {
            // archived: null lists archived sessions too, false leaves them out.
            const d = await query(WorkspaceSessionsDocument, { ws, after, archived: archivedRef.current ? null : false });
            if (ws !== currentWs()) return;
            const page = d.workspace?.sessions;
            if (!page) break;
            all.push(...page.edges.map((e) => e.node));
            if (!page.pageInfo.hasNextPage || !page.pageInfo.endCursor) break;
            after = page.pageInfo.endCursor;
          }
        } finally {
          duringReload.current = null;
        }
        // What was patched meanwhile may be newer than what was read. Rows
        // that did not change stay the objects the tree holds (its items
        // are memoized); a read that changed nothing renders nothing.
        const fresh = unchangedRows(listed.current, reapply(all, meanwhile));
        if (fresh === listed.current) return;
        listed.current = fresh;
        // A transition: React renders a long list in slices, leaving the
        // page to input meanwhile.
        startTransition(() => setSessions(fresh));
      }),
    [currentWs],
  );

  // The list as last set (a transition may not have rendered it yet): what
  // a patch applies to.
  const listed = useRef(sessions);
  // The patches since the running reload started (null: none runs).
  const duringReload = useRef<Map<string, SessionSummaryFragment> | null>(null);
  // patch puts a session as an event carried it in place of the listed
  // one, at once (patchList), and returns false when the list needs a
  // reload instead. A reload under way may have read the session before
  // the change: it puts the patch onto what it read, rather than reloading
  // again (a burst of events would keep reloads running back to back).
  const patch = useCallback((s: SessionSummaryFragment): boolean => {
    const next = patchList(listed.current, s);
    if (!next) return false;
    duringReload.current?.set(s.id, s);
    listed.current = next;
    startTransition(() => setSessions(next));
    return true;
  }, []);
  // refreshRow reads one session's row again and puts it in place, or,
  // new, where the server lists it (none when the list does not show
  // it); the whole list when it is gone or no longer fits where it was,
  // or when a reload under way may have read the list before it.
  const refreshRow = useCallback(
    async (id: string) => {
      const ws = currentWs();
      if (!ws) return;
      const d = await query(ListedSessionRowDocument, { ws, id });
      if (ws !== currentWs()) return;
      const s = d.session;
      if (s && patch(s)) return;
      if (s && !listed.current.some((x) => x.id === s.id) && !duringReload.current) {
        if (!listable(s, archivedRef.current)) return;
        const next = insertRow(listed.current, s);
        listed.current = next;
        startTransition(() => setSessions(next));
        return;
      }
      await refresh();
    },
    [currentWs, patch, refresh],
  );
  const clear = useCallback(() => {
    listed.current = [];
    setSessions([]);
  }, []);

  // setShowArchived takes effect at the next refresh.
  const setShowArchived = useCallback((v: boolean) => {
    archivedRef.current = v;
    setShowArchivedState(v);
  }, []);

  return { sessions, refresh, refreshRow, patch, clear, showArchived, setShowArchived };
}
