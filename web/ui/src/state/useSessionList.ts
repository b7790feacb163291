// The shown workspace's sessions (all pages), archived ones when asked for.
import { startTransition, useCallback, useMemo, useRef, useState } from "react";
import { query } from "../client";
import { WorkspaceSessionsDocument, type SessionSummaryFragment } from "../gql/graphql";
import { coalesce } from "./coalesce";

export function useSessionList(currentWs: () => string | undefined) {
  const [sessions, setSessions] = useState<SessionSummaryFragment[]>([]);
  const [showArchived, setShowArchivedState] = useState(false);
  const archivedRef = useRef(showArchived);
  archivedRef.current = showArchived;

  const refresh = useMemo(
    () =>
      coalesce(async () => {
        const ws = currentWs();
        if (!ws) return;
        const all: SessionSummaryFragment[] = [];
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
        listed.current = all;
        // A transition: React renders a long list in slices, leaving the
        // page to input meanwhile.
        startTransition(() => setSessions(all));
      }),
    [currentWs],
  );

  const listed = useRef(sessions);
  listed.current = sessions;
  // patch puts a session as an event carried it in place of the listed
  // one, at once. It returns false when the list needs a reload instead:
  // the session is not listed, or it was archived, restored or moved (which
  // changes other rows too), or a reload under way may have read the list
  // before the change (then it is patched and reloaded).
  const patch = useCallback(
    (s: SessionSummaryFragment): boolean => {
      const cur = listed.current;
      const i = cur.findIndex((x) => x.id === s.id);
      if (i < 0 || cur[i].archived !== s.archived || cur[i].parent?.id !== s.parent?.id) return false;
      const next = cur.slice();
      next[i] = s;
      listed.current = next;
      startTransition(() => setSessions(next));
      return !refresh.busy();
    },
    [refresh],
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

  return { sessions, refresh, patch, clear, showArchived, setShowArchived };
}
