// What is shown, and the URL that names it (route.ts): picking a workspace,
// a session, a comparison or an exploration, the start (the workspaces, then what the URL
// names) and the browser's back and forward.
import { useCallback, useEffect, useState } from "react";
import { readRoute, writeRoute } from "../route";
import type { ExplorationFieldsFragment } from "../gql/graphql";
import type { useComparison } from "./useComparison";
import type { useExploration } from "./useExploration";
import type { useSessionList } from "./useSessionList";
import type { useShownSession } from "./useShownSession";
import type { useWorkspaces } from "./useWorkspaces";

interface Deps {
  workspaces: ReturnType<typeof useWorkspaces>;
  list: ReturnType<typeof useSessionList>;
  shown: ReturnType<typeof useShownSession>;
  comparison: ReturnType<typeof useComparison>;
  exploration: ReturnType<typeof useExploration>;
  // showOther tells the activity stream another session is shown.
  showOther: () => void;
  guarded: (fn: () => Promise<void>) => Promise<void>;
  fail: (e: unknown) => void;
}

export function useNavigation(d: Deps) {
  const [ready, setReady] = useState(false);
  const { pick, current: currentWs, reload } = d.workspaces;
  const { clear: clearList, refresh: refreshList } = d.list;
  const { show, current: currentShown, refresh: refreshShown } = d.shown;
  const { set: setCompare, current: currentCompare, refresh: refreshCompare } = d.comparison;
  const { set: setExplore, current: currentExplore, refresh: refreshExplore, refreshList: refreshExplorations, clearList: clearExplorations } = d.exploration;
  const { showOther, guarded, fail } = d;

  // activate shows a session (or none) and puts it in the URL.
  const activate = useCallback(
    (id: string | undefined, push = true) => {
      if (id !== currentShown()) clearExplorations();
      if (id !== currentShown() || currentCompare()) {
        setCompare(undefined);
        show(id);
        showOther();
      }
      setExplore(undefined);
      writeRoute({ w: currentWs(), s: id }, push);
      if (id) {
        void guarded(refreshShown);
        void guarded(refreshExplorations);
      }
    },
    [currentShown, currentCompare, setCompare, setExplore, clearExplorations, show, showOther, currentWs, guarded, refreshShown, refreshExplorations],
  );

  const selectWorkspace = useCallback(
    (ws: string | undefined, session?: string, push = true) => {
      if (pick(ws)) clearList();
      activate(session, push);
      void guarded(refreshList);
    },
    [pick, clearList, activate, guarded, refreshList],
  );

  const compare = useCallback(
    (b: string | undefined, push = true) => {
      if (b) setExplore(undefined);
      setCompare(b);
      writeRoute({ w: currentWs(), s: currentShown(), c: b }, push);
      if (b) void guarded(refreshCompare);
    },
    [setCompare, setExplore, currentWs, currentShown, guarded, refreshCompare],
  );

  // explore shows exploration x of the shown session (none: undefined);
  // given is the exploration when at hand (exploreSession's answer).
  const explore = useCallback(
    (x: string | undefined, push = true, given?: ExplorationFieldsFragment) => {
      if (x) setCompare(undefined);
      setExplore(x, given);
      writeRoute({ w: currentWs(), s: currentShown(), x }, push);
      if (x && !given) void guarded(refreshExplore);
      // The list is not read while an exploration is shown in its place.
      if (!x) void guarded(refreshExplorations);
    },
    [setCompare, setExplore, currentWs, currentShown, guarded, refreshExplore, refreshExplorations],
  );

  // openExploration shows exploration x of session s (from a branch, or
  // the list): one step back returns to where the person was.
  const openExploration = useCallback(
    (s: string, x: string) => {
      activate(s);
      explore(x, false);
    },
    [activate, explore],
  );

  // compareSessions puts session a beside b (two branches of an
  // exploration): one step back returns to the exploration.
  const compareSessions = useCallback(
    (a: string, b: string) => {
      activate(a);
      compare(b, false);
    },
    [activate, compare],
  );

  useEffect(() => {
    const start = async () => {
      try {
        const list = await reload();
        const r = readRoute();
        const known = list.some((w) => w.id === r.w);
        const first = known ? r.w : list[0]?.id;
        if (first) selectWorkspace(first, known ? r.s : undefined, false);
        if (known && r.s && r.c) compare(r.c, false);
        else if (known && r.s && r.x) explore(r.x, false);
      } catch (e) {
        fail(e);
      } finally {
        setReady(true);
      }
    };
    void start();
    const onHash = () => {
      const r = readRoute();
      if (r.w && r.w !== currentWs()) selectWorkspace(r.w, r.s, false);
      else if (r.s !== currentShown()) activate(r.s, false);
      if (r.c !== currentCompare()) compare(r.c, false);
      if (!r.c && r.x !== currentExplore()) explore(r.x, false);
    };
    window.addEventListener("hashchange", onHash);
    return () => window.removeEventListener("hashchange", onHash);
  }, [activate, compare, explore, fail, reload, selectWorkspace, currentWs, currentShown, currentCompare, currentExplore]);

  // The browser tests wait for this before they look.
  useEffect(() => {
    document.body.dataset.ready = ready ? "true" : "false";
  }, [ready]);

  return { ready, activate, selectWorkspace, compare, explore, openExploration, compareSessions };
}
