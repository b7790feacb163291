// The shown workspace's sessions (all pages), archived ones when asked for.
import { useCallback, useMemo, useRef, useState } from "react";
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
        setSessions(all);
      }),
    [currentWs],
  );

  const clear = useCallback(() => setSessions([]), []);

  // setShowArchived takes effect at the next refresh.
  const setShowArchived = useCallback((v: boolean) => {
    archivedRef.current = v;
    setShowArchivedState(v);
  }, []);

  return { sessions, refresh, clear, showArchived, setShowArchived };
}
