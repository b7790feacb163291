// The explorations of the shown session (issue 32): the list of those
// made from it (and, on a branch, the one it belongs to), and the one
// shown, while the person looks at it (&x= in the URL). Both are read
// again only when an event asks (EXPLORATION_UPDATED, CHECK_UPDATED), not
// polled.
import { startTransition, useCallback, useMemo, useRef, useState } from "react";
import { query } from "../client";
import { ExplorationViewDocument, SessionExplorationsDocument, type ExplorationFieldsFragment, type SessionExplorationsQuery } from "../gql/graphql";
import { coalesce } from "./coalesce";
import { sessionIds } from "./exploration";
import { unchanged, unchangedBranches } from "./unchanged";

export type SessionExplorations = NonNullable<SessionExplorationsQuery["session"]>;

export function useExploration(currentWs: () => string | undefined, currentActive: () => string | undefined) {
  const [explorationId, setExplorationId] = useState<string | undefined>();
  const [exploration, setExploration] = useState<ExplorationFieldsFragment | null>(null);
  const [listed, setListed] = useState<SessionExplorations | null>(null);
  const ref = useRef(explorationId);
  ref.current = explorationId;
  const current = useCallback(() => ref.current, []);
  // The branches' sessions, for the events that concern the view.
  const shownRef = useRef<{ id: string; sessionIds: string[] } | undefined>(undefined);
  shownRef.current = exploration && exploration.id === explorationId ? { id: exploration.id, sessionIds: sessionIds(exploration) } : explorationId ? { id: explorationId, sessionIds: [] } : undefined;
  const now = useCallback(() => shownRef.current, []);

  const refresh = useMemo(
    () =>
      coalesce(async () => {
        const ws = currentWs();
        const s = currentActive();
        const x = ref.current;
        if (!ws || !s || !x) return;
        const d = await query(ExplorationViewDocument, { ws, s, x });
        if (s !== currentActive() || x !== ref.current) return;
        // Transitions: a read's answer renders in slices (useActivity).
        startTransition(() => setExploration((prev) => (d.exploration ? unchangedBranches(prev, d.exploration) : d.exploration)));
      }),
    [currentWs, currentActive],
  );

  const refreshList = useMemo(
    () =>
      coalesce(async () => {
        const ws = currentWs();
        const id = currentActive();
        if (!ws || !id) return;
        const d = await query(SessionExplorationsDocument, { ws, id });
        if (id !== currentActive()) return;
        startTransition(() => setListed((prev) => unchanged(prev, d.session ?? null)));
      }),
    [currentWs, currentActive],
  );

  // set shows exploration x of the shown session (none: undefined), as
  // given when it is at hand (the answer of exploreSession), else empty
  // until refreshed.
  const set = useCallback((x: string | undefined, given?: ExplorationFieldsFragment) => {
    if (x === ref.current && !given) return;
    ref.current = x;
    setExplorationId(x);
    setExploration(given && given.id === x ? given : null);
  }, []);

  // put shows what a mutation answered for the shown exploration.
  const put = useCallback((x: ExplorationFieldsFragment) => {
    if (x.id === ref.current) setExploration(x);
  }, []);

  // clearList: another session is shown.
  const clearList = useCallback(() => setListed(null), []);

  return { explorationId, exploration, listed, current, now, set, put, refresh, refreshList, clearList };
}
