// What is shown, and the URL that names it (route.ts): picking a workspace,
// a session or a comparison, the start (the workspaces, then what the URL
// names) and the browser's back and forward.
import { useCallback, useEffect, useState } from "react";
import { readRoute, writeRoute } from "../route";
import type { useComparison } from "./useComparison";
import type { useSessionList } from "./useSessionList";
import type { useShownSession } from "./useShownSession";
import type { useWorkspaces } from "./useWorkspaces";

interface Deps {
  workspaces: ReturnType<typeof useWorkspaces>;
  list: ReturnType<typeof useSessionList>;
  shown: ReturnType<typeof useShownSession>;
  comparison: ReturnType<typeof useComparison>;
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
  const { showOther, guarded, fail } = d;

  // activate shows a session (or none) and puts it in the URL.
  const activate = useCallback(
    (id: string | undefined, push = true) => {
      if (id !== currentShown() || currentCompare()) {
        setCompare(undefined);
        show(id);
        showOther();
      }
      writeRoute({ w: currentWs(), s: id }, push);
      if (id) void guarded(refreshShown);
    },
    [currentShown, currentCompare, setCompare, show, showOther, currentWs, guarded, refreshShown],
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
      setCompare(b);
      writeRoute({ w: currentWs(), s: currentShown(), c: b }, push);
      if (b) void guarded(refreshCompare);
    },
    [setCompare, currentWs, currentShown, guarded, refreshCompare],
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
    };
    window.addEventListener("hashchange", onHash);
    return () => window.removeEventListener("hashchange", onHash);
  }, [activate, compare, fail, reload, selectWorkspace, currentWs, currentShown, currentCompare]);

  // The browser tests wait for this before they look.
  useEffect(() => {
    document.body.dataset.ready = ready ? "true" : "false";
  }, [ready]);

  return { ready, activate, selectWorkspace, compare };
}
