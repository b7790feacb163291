// The shown session: its head (title, status, parent, forks), its loaded
// turns (the latest page; earlier pages on request) with their messages,
// and its pending approvals. current() is the session picked last, at once,
// for loaders that outlive renders.
import { startTransition, useCallback, useMemo, useRef, useState } from "react";
import { query } from "../client";
import {
  EarlierTurnsDocument,
  PendingApprovalsDocument,
  SessionDetailDocument,
  type ApprovalFieldsFragment,
  type ForkChildFragment,
  type SessionHeadFragment,
  type SessionSummaryFragment,
  type TurnWithMessagesFragment,
} from "../gql/graphql";
import { forkMarks, inheritedTurns, mergeLatest, prependEarlier } from "../lineage";
import { coalesce } from "./coalesce";
import { withForkChild, withNewForkChild } from "./patch";

// Turns per page: the latest page is shown, earlier ones on request.
const PAGE = 20;

interface Earlier {
  has: boolean;
  cursor?: string | null;
}

export function useShownSession(currentWs: () => string | undefined, guarded: (fn: () => Promise<void>) => Promise<void>) {
  const [activeId, setActiveId] = useState<string | undefined>();
  const [head, setHead] = useState<SessionHeadFragment | null>(null);
  const [turns, setTurns] = useState<TurnWithMessagesFragment[]>([]);
  const [earlier, setEarlier] = useState<Earlier>({ has: false });
  const [loadingEarlier, setLoadingEarlier] = useState(false);
  const [approvals, setApprovals] = useState<ApprovalFieldsFragment[]>([]);
  // The session asked for that does not exist (deleted, or a stale link).
  const [missing, setMissing] = useState<string | undefined>();

  const activeRef = useRef(activeId);
  activeRef.current = activeId;
  const turnsRef = useRef(turns);
  turnsRef.current = turns;
  // The head as last set (a transition may not have rendered it yet):
  // what a patch builds on. putHead sets both.
  const headRef = useRef(head);
  const putHead = useCallback((h: SessionHeadFragment | null) => {
    headRef.current = h;
    setHead(h);
  }, []);
  const current = useCallback(() => activeRef.current, []);

  const refresh = useMemo(
    () =>
      coalesce(async () => {
        const ws = currentWs();
        const id = activeRef.current;
        if (!ws || !id) return;
        const [d, pa] = await Promise.all([query(SessionDetailDocument, { ws, id, last: PAGE }), query(PendingApprovalsDocument, { ws, id })]);
        if (ws !== currentWs() || id !== activeRef.current) return;
        const session = d.session;
        if (!session) {
          // Deleted meanwhile (here or elsewhere), or a stale link: say so
          // where the session would be; nothing failed.
          putHead(null);
          setMissing(id);
          return;
        }
        // The latest page replaces what it covers; earlier pages loaded
        // stay, and so does the cursor to the ones before them.
        const page = session.turnConnection;
        const merged = mergeLatest(turnsRef.current, page.edges.map((e) => e.node));
        // As set, before the transition renders it: what the next refresh
        // merges onto.
        turnsRef.current = merged.turns;
        // A transition: the answer renders in slices (useActivity), all of
        // it in one render.
        startTransition(() => {
          setMissing(undefined);
          setApprovals(pa.session?.pendingApprovals ?? []);
          putHead(session);
          setTurns(merged.turns);
          if (merged.kept === 0) setEarlier({ has: page.pageInfo.hasPreviousPage, cursor: page.pageInfo.startCursor });
        });
      }),
    [currentWs, putHead],
  );

  // patchForkChild puts a fork's fields as an event carried them in the
  // shown session's fork marks.
  const patchForkChild = useCallback((s: SessionSummaryFragment) => {
    const h = headRef.current;
    if (!h) return;
    putHead(withForkChild(h, s));
  }, [putHead]);

  // addForkChild puts a new fork, as its event carried it, in the shown
  // session's fork marks; false when only a read of the head can (see
  // withNewForkChild).
  const addForkChild = useCallback((s: SessionSummaryFragment): boolean => {
    const h = headRef.current;
    const next = h && withNewForkChild(h, s);
    if (!next) return false;
    putHead(next);
    return true;
  }, [putHead]);

  // show makes id the shown session, empty until refreshed.
  const show = useCallback((id: string | undefined) => {
    activeRef.current = id;
    setActiveId(id);
    putHead(null);
    turnsRef.current = [];
    setTurns([]);
    setApprovals([]);
    setEarlier({ has: false });
  }, [putHead]);

  const loadEarlier = useCallback(() => {
    const ws = currentWs();
    const id = activeRef.current;
    if (!ws || !id || !earlier.has || !earlier.cursor || loadingEarlier) return;
    setLoadingEarlier(true);
    void guarded(async () => {
      const d = await query(EarlierTurnsDocument, { ws, id, before: earlier.cursor!, last: PAGE });
      if (id !== activeRef.current || !d.session) return;
      const page = d.session.turnConnection;
      const older = page.edges.map((e) => e.node);
      setTurns((ts) => prependEarlier(ts, older));
      setEarlier({ has: page.pageInfo.hasPreviousPage, cursor: page.pageInfo.startCursor });
    }).finally(() => setLoadingEarlier(false));
  }, [currentWs, earlier, loadingEarlier, guarded]);

  const messages = useMemo(() => turns.flatMap((t) => t.messages), [turns]);
  // now is what an activity event arriving now concerns: the session
  // picked last, as rendered.
  const rendered = useRef({ head, messages });
  rendered.current = { head, messages };
  const now = useCallback(() => ({ activeId: activeRef.current, ...rendered.current }), []);
  const running = turns.find((t) => t.status === "IN_PROGRESS");
  const inherited = useMemo(() => (head ? inheritedTurns(head, turns) : new Set<string>()), [head, turns]);
  const marks = useMemo(() => (head ? forkMarks(head, turns) : new Map<string, ForkChildFragment[]>()), [head, turns]);

  return {
    activeId,
    current,
    now,
    head,
    turns,
    messages,
    running,
    inherited,
    marks,
    hasEarlier: earlier.has,
    loadingEarlier,
    loadEarlier,
    approvals,
    missing,
    show,
    refresh,
    patchForkChild,
    addForkChild,
  };
}

