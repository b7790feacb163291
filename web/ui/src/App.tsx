// The GUI: a workspace's fork tree on the left, the shown session on the
// right. State lives here; the URL hash follows what is shown (route.ts);
// the activity subscription keeps it current.
import { Badge, Button, Callout, Flex, Heading, Text, TextArea } from "@radix-ui/themes";
import { useCallback, useEffect, useMemo, useRef, useState, type FormEvent } from "react";
import { ApiError, mutate, newRequestId, onConnState, query, toApiError, client, type ConnState } from "./client";
import { Conversation } from "./Conversation";
import {
  ActivityDocument,
  CompareSessionsDocument,
  DeleteSessionDocument,
  UpdateSessionDocument,
  RespondToApprovalDocument,
  PendingApprovalsDocument,
  type ApprovalDecision,
  CreateWorkspaceDocument,
  EarlierTurnsDocument,
  ForkSessionDocument,
  InterruptTurnDocument,
  SendMessageDocument,
  SessionDetailDocument,
  StartSessionDocument,
  WorkspaceSessionsDocument,
  WorkspacesDocument,
  type WorkspacesQuery,
} from "./gql/graphql";
import { countDescendants, forkMarks, inheritedTurns, mergeLatest, sameTree } from "./lineage";
import { CompareView, ComparePicker, type Comparison } from "./Compare";
import { RenameForm, TidyActions } from "./Tidy";
import type { Approval } from "./Approvals";
import { readRoute, writeRoute } from "./route";
import { StatusBadge } from "./Status";
import { coalesce } from "./store";
import { ForkTree } from "./Tree";
import type { Detail, LoadedTurn, Summary } from "./types";
import { SignIn } from "./SignIn";

// Turns per page: the latest page is shown, earlier ones on request.
const PAGE = 20;

type Workspace = WorkspacesQuery["workspaces"][number];

export function App() {
  const [workspaces, setWorkspaces] = useState<Workspace[] | null>(null);
  const [wsId, setWsId] = useState<string | undefined>();
  const [sessions, setSessions] = useState<Summary[]>([]);
  const [activeId, setActiveId] = useState<string | undefined>();
  const [detail, setDetail] = useState<Detail | null>(null);
  const [turns, setTurns] = useState<LoadedTurn[]>([]);
  const [earlier, setEarlier] = useState<{ has: boolean; cursor?: string | null }>({ has: false });
  const [loadingEarlier, setLoadingEarlier] = useState(false);
  const turnsRef = useRef(turns);
  turnsRef.current = turns;
  const [streams, setStreams] = useState<Map<string, string>>(new Map());
  const [error, setError] = useState<ApiError | null>(null);
  const [conn, setConn] = useState<ConnState | "idle">("idle");
  const [busy, setBusy] = useState(false);
  const [draft, setDraft] = useState("");
  const [signIn, setSignIn] = useState(false);
  const [ready, setReady] = useState(false);
  const [missing, setMissing] = useState<string | undefined>();
  const [approvals, setApprovals] = useState<Approval[]>([]);

  // Refs for the loaders, which outlive renders.
  const [showArchived, setShowArchived] = useState(false);
  const [compareWith, setCompareWith] = useState<string | undefined>();
  const [comparison, setComparison] = useState<Comparison | null>(null);
  const [renaming, setRenaming] = useState(false);
  const cur = useRef({ wsId, activeId, showArchived, compareWith });
  cur.current.showArchived = showArchived;
  cur.current.compareWith = compareWith;
  cur.current.wsId = wsId;
  cur.current.activeId = activeId;

  const fail = useCallback((e: unknown) => {
    const err = toApiError(e);
    if (err.code === "unauthenticated") setSignIn(true);
    else setError(err);
  }, []);

  const guarded = useCallback(
    async (fn: () => Promise<void>) => {
      try {
        await fn();
      } catch (e) {
        fail(e);
      }
    },
    [fail],
  );

  const refreshSessions = useMemo(
    () =>
      coalesce(async () => {
        const ws = cur.current.wsId;
        if (!ws) return;
        const all: Summary[] = [];
        let after: string | null | undefined;
        for (;;) {
          // archived: null lists archived sessions too, false leaves them out.
          const d = await query(WorkspaceSessionsDocument, { ws, after, archived: cur.current.showArchived ? null : false });
          if (ws !== cur.current.wsId) return;
          const page = d.workspace?.sessions;
          if (!page) break;
          all.push(...page.edges.map((e) => e.node));
          if (!page.pageInfo.hasNextPage || !page.pageInfo.endCursor) break;
          after = page.pageInfo.endCursor;
        }
        setSessions(all);
      }),
    [],
  );

  const refreshActive = useMemo(
    () =>
      coalesce(async () => {
        const { wsId: ws, activeId: id } = cur.current;
        if (!ws || !id) return;
        const [d, pa] = await Promise.all([query(SessionDetailDocument, { ws, id, last: PAGE }), query(PendingApprovalsDocument, { ws, id })]);
        if (ws !== cur.current.wsId || id !== cur.current.activeId) return;
        if (!d.session) {
          // Deleted meanwhile (here or elsewhere), or a stale link: say so
          // where the session would be; nothing failed.
          setDetail(null);
          setMissing(id);
          return;
        }
        setMissing(undefined);
        setApprovals(pa.session?.pendingApprovals ?? []);
        // The latest page replaces what it covers; earlier pages loaded
        // stay, and so does the cursor to the ones before them.
        const page = d.session.turnConnection;
        const merged = mergeLatest(turnsRef.current, page.edges.map((e) => e.node));
        setDetail(d.session);
        setTurns(merged.turns);
        if (merged.kept === 0) setEarlier({ has: page.pageInfo.hasPreviousPage, cursor: page.pageInfo.startCursor });
      }),
    [],
  );

  const refreshCompare = useMemo(
    () =>
      coalesce(async () => {
        const { wsId: ws, activeId: a, compareWith: b } = cur.current;
        if (!ws || !a || !b) return;
        const d = await query(CompareSessionsDocument, { ws, a, b });
        if (a !== cur.current.activeId || b !== cur.current.compareWith) return;
        setComparison(d.compareSessions);
      }),
    [],
  );

  const compare = useCallback(
    (b: string | undefined, push = true) => {
      cur.current.compareWith = b;
      setCompareWith(b);
      setComparison(null);
      writeRoute({ w: cur.current.wsId, s: cur.current.activeId, c: b }, push);
      if (b) void guarded(refreshCompare);
    },
    [guarded, refreshCompare],
  );

  const loadEarlier = useCallback(() => {
    const { wsId: ws, activeId: id } = cur.current;
    if (!ws || !id || !earlier.has || !earlier.cursor || loadingEarlier) return;
    setLoadingEarlier(true);
    guarded(async () => {
      const d = await query(EarlierTurnsDocument, { ws, id, before: earlier.cursor!, last: PAGE });
      if (id !== cur.current.activeId || !d.session) return;
      const page = d.session.turnConnection;
      const older = page.edges.map((e) => e.node);
      setTurns((ts) => [...older.filter((o) => !ts.some((t) => t.id === o.id)), ...ts]);
      setEarlier({ has: page.pageInfo.hasPreviousPage, cursor: page.pageInfo.startCursor });
    }).finally(() => setLoadingEarlier(false));
  }, [earlier, loadingEarlier, guarded]);

  // activate shows a session (or none) and puts it in the URL.
  const activate = useCallback(
    (id: string | undefined, push = true) => {
      if (id !== cur.current.activeId || cur.current.compareWith) {
        cur.current.compareWith = undefined;
        setCompareWith(undefined);
        setComparison(null);
        setRenaming(false);
        cur.current.activeId = id;
        setActiveId(id);
        setDetail(null);
        turnsRef.current = [];
        setTurns([]);
        setStreams(new Map());
        setApprovals([]);
        setEarlier({ has: false });
      }
      writeRoute({ w: cur.current.wsId, s: id }, push);
      if (id) void guarded(refreshActive);
      else setDetail(null);
    },
    [guarded, refreshActive],
  );

  const selectWorkspace = useCallback(
    (ws: string | undefined, session?: string, push = true) => {
      if (ws !== cur.current.wsId) {
        cur.current.wsId = ws;
        setWsId(ws);
        setSessions([]);
      }
      activate(session, push);
      void guarded(refreshSessions);
    },
    [activate, guarded, refreshSessions],
  );

  const loadWorkspaces = useCallback(async () => {
    const d = await query(WorkspacesDocument, {});
    setWorkspaces(d.workspaces);
    return d.workspaces;
  }, []);

  // Start: the workspaces, then what the URL names.
  useEffect(() => {
    const start = async () => {
      try {
        const list = await loadWorkspaces();
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
      if (r.w && r.w !== cur.current.wsId) selectWorkspace(r.w, r.s, false);
      else if (r.s !== cur.current.activeId) activate(r.s, false);
      if (r.c !== cur.current.compareWith) compare(r.c, false);
    };
    window.addEventListener("hashchange", onHash);
    return () => window.removeEventListener("hashchange", onHash);
  }, [activate, compare, fail, loadWorkspaces, selectWorkspace]);

  useEffect(() => {
    document.body.dataset.ready = ready ? "true" : "false";
  }, [ready]);

  // Live activity for the workspace.
  useEffect(() => {
    if (!wsId) {
      setConn("idle");
      return;
    }
    const off = onConnState((s, code) => {
      if (s === "closed" && code === 4403) setSignIn(true);
      // "live" comes with the SUBSCRIBED event, once the subscription is
      // registered on the server; a bare connection is not yet that.
      if (s !== "live") setConn(s === "closed" ? "reconnecting" : s);
    });
    setConn("connecting");
    const sub = client.subscription(ActivityDocument, { ws: wsId }).subscribe((res) => {
      if (res.error) {
        const err = toApiError(res.error);
        if (err.code === "unauthenticated") setSignIn(true);
        else if (err.code !== "activity.resync_required") setError(err);
        return;
      }
      const ev = res.data?.activity;
      if (!ev) return;
      const active = cur.current.activeId;
      switch (ev.kind) {
        case "SUBSCRIBED":
          // Registered: every later change arrives as an event; what
          // happened before (or while reconnecting) is read now.
          setConn("live");
          void guarded(refreshSessions);
          void guarded(refreshActive);
          return;
        case "RESYNC_REQUIRED":
          void guarded(refreshSessions);
          void guarded(refreshActive);
          void guarded(refreshCompare);
          return;
        case "MESSAGE_DELTA":
          if (ev.agentSessionId !== active || !ev.messageId || !ev.delta) return;
          // By item: its view shows the stream where it belongs (an agent
          // message's text, a command's output, a plan); reasoning stays
          // collapsed and is read when done.
          setStreams((m) => new Map(m).set(ev.messageId!, (m.get(ev.messageId!) ?? "") + ev.delta));
          if (!messagesRef.current.some((x) => x.id === ev.messageId)) void guarded(refreshActive);
          return;
        case "SESSION_CREATED":
        case "SESSION_FORKED":
        case "SESSION_UPDATED":
        case "SESSION_DELETED":
          void guarded(refreshSessions);
          if (ev.agentSessionId === active) {
            if (ev.kind === "SESSION_DELETED") activate(undefined, false);
            else void guarded(refreshActive);
          } else if (detailRef.current && (detailRef.current.parent?.id === ev.agentSessionId || detailRef.current.forkPoints.some((fp) => fp.children.some((c) => c.id === ev.agentSessionId)))) {
            void guarded(refreshActive);
          }
          return;
        default:
          if (ev.agentSessionId === active) void guarded(refreshActive);
          if (cur.current.compareWith && (ev.agentSessionId === active || ev.agentSessionId === cur.current.compareWith)) void guarded(refreshCompare);
          if (ev.kind === "TURN_STARTED" || ev.kind === "TURN_COMPLETED") void guarded(refreshSessions);
      }
    });
    return () => {
      off();
      sub.unsubscribe();
    };
  }, [wsId, activate, guarded, refreshActive, refreshSessions, refreshCompare]);

  const messages = useMemo(() => turns.flatMap((t) => t.messages), [turns]);
  const messagesRef = useRef(messages);
  messagesRef.current = messages;
  const detailRef = useRef(detail);
  detailRef.current = detail;

  // ---- actions ----

  const act = async (fn: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await fn();
    } catch (e) {
      fail(e);
    } finally {
      setBusy(false);
    }
  };

  const fork = (lastTurnId?: string) =>
    act(async () => {
      if (!wsId || !activeId) return;
      const d = await mutate(ForkSessionDocument, { input: { workspaceId: wsId, agentSessionId: activeId, requestId: newRequestId(), lastTurnId } });
      activate(d.forkSession.session.id);
      await refreshSessions();
    });

  const send = (e: FormEvent) => {
    e.preventDefault();
    const text = draft;
    if (!text.trim() || !wsId || !activeId) return;
    void act(async () => {
      await mutate(SendMessageDocument, { input: { workspaceId: wsId, agentSessionId: activeId, text } });
      // The typed text is cleared only once the server took it.
      setDraft((d) => (d === text ? "" : d));
      await refreshActive();
    });
  };

  const running = turns.find((t) => t.status === "IN_PROGRESS");
  const stop = () =>
    act(async () => {
      if (!wsId || !activeId || !running) return;
      await mutate(InterruptTurnDocument, { input: { workspaceId: wsId, agentSessionId: activeId, turnId: running.id } });
      await refreshActive();
    });

  const newSession = () =>
    act(async () => {
      if (!wsId) return;
      const d = await mutate(StartSessionDocument, { input: { workspaceId: wsId } });
      activate(d.startSession.id);
      await refreshSessions();
    });

  const createWorkspace = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    const form = e.currentTarget;
    void act(async () => {
      const d = await mutate(CreateWorkspaceDocument, { input: { name: String(f.get("name") ?? ""), rootPath: String(f.get("rootPath") ?? "") } });
      form.reset();
      (form.closest("details") as HTMLDetailsElement | null)?.removeAttribute("open");
      await loadWorkspaces();
      selectWorkspace(d.createWorkspace.id);
    });
  };

  const rename = async (title: string): Promise<boolean> => {
    let ok = false;
    await act(async () => {
      if (!wsId || !activeId) return;
      await mutate(UpdateSessionDocument, { input: { workspaceId: wsId, agentSessionId: activeId, title } });
      ok = true;
      await Promise.all([refreshSessions(), refreshActive()]);
    });
    return ok;
  };

  const archive = (archived: boolean) =>
    act(async () => {
      if (!wsId || !activeId) return;
      await mutate(UpdateSessionDocument, { input: { workspaceId: wsId, agentSessionId: activeId, archived } });
      await Promise.all([refreshSessions(), refreshActive()]);
    });

  const remove = () =>
    act(async () => {
      if (!wsId || !activeId) return;
      const parent = detail?.parent?.id;
      await mutate(DeleteSessionDocument, { input: { workspaceId: wsId, agentSessionId: activeId, subtree: true } });
      activate(parent);
      await refreshSessions();
    });

  const treeOf = useMemo(() => sameTree(sessions, activeId), [sessions, activeId]);
  const descendants = useMemo(() => countDescendants(sessions, activeId), [sessions, activeId]);

  const decide = (approvalId: string, decision: string) =>
    act(async () => {
      if (!wsId || !activeId) return;
      await mutate(RespondToApprovalDocument, {
        input: { workspaceId: wsId, agentSessionId: activeId, approvalId, decision: decision as ApprovalDecision },
      });
      await refreshActive();
    });

  const inherited = useMemo(() => (detail ? inheritedTurns(detail, turns) : new Set<string>()), [detail, turns]);
  const marks = useMemo(() => (detail ? forkMarks(detail, turns) : new Map()), [detail, turns]);

  if (signIn) return <SignIn />;

  const noWorkspaces = workspaces !== null && workspaces.length === 0;
  const working = detail?.status === "WORKING" || !!running;

  return (
    <div className="app">
      <header className="topbar">
        <span className="brand">tuttid</span>
        <label className="ws-picker">
          <Text size="2">Workspace</Text>
          <select
            data-testid="workspace-select"
            aria-label="Workspace"
            value={wsId ?? ""}
            onChange={(e) => e.target.value && selectWorkspace(e.target.value)}
          >
            {(workspaces ?? []).map((w) => (
              <option key={w.id} value={w.id} title={w.rootPath}>
                {w.name}
              </option>
            ))}
          </select>
        </label>
        <details className="ws-create" open={noWorkspaces || undefined}>
          <summary data-testid="new-workspace">New workspace</summary>
          <form className="ws-form" data-testid="workspace-form" onSubmit={createWorkspace}>
            <label>
              Name <input name="name" data-testid="workspace-name" required maxLength={200} autoComplete="off" />
            </label>
            <label>
              Root path <input name="rootPath" data-testid="workspace-root" required placeholder="/home/me/project" autoComplete="off" />
            </label>
            <Button type="submit" size="1" data-testid="create-workspace" disabled={busy}>
              Create
            </Button>
          </form>
        </details>
        <span className="spacer" />
        <span className="conn" data-testid="connection" data-state={conn} title="Live updates">
          {conn === "live" ? "live" : conn === "idle" ? "offline" : conn === "closed" ? "offline" : `${conn}…`}
        </span>
      </header>
      <div className="banner-slot">
        <div className="banner" data-testid="error-banner" role="alert" hidden={!error} data-code={error?.code}>
          {error && (
            <Callout.Root color="red" size="1">
              <Callout.Text>
                <code className="code">{error.code}</code> {error.message}
              </Callout.Text>
              <Button size="1" variant="ghost" aria-label="Dismiss error" onClick={() => setError(null)}>
                ×
              </Button>
            </Callout.Root>
          )}
        </div>
      </div>
      <div className="layout">
        <nav className="sidebar" aria-label="Sessions">
          <Button data-testid="new-session" disabled={!wsId || busy} onClick={newSession}>
            New session
          </Button>
          <ForkTree sessions={sessions} selected={activeId} onSelect={(id) => activate(id)} />
          <Text as="label" size="1" className="muted show-archived">
            <Flex gap="1" align="center">
              <input
                type="checkbox"
                data-testid="show-archived"
                checked={showArchived}
                onChange={(e) => {
                  cur.current.showArchived = e.target.checked;
                  setShowArchived(e.target.checked);
                  void guarded(refreshSessions);
                }}
              />
              Show archived sessions
            </Flex>
          </Text>
          {wsId && sessions.length === 0 && (
            <Text size="2" className="muted">
              No sessions yet.
            </Text>
          )}
        </nav>
        <main className="main">
          {!detail && <section data-testid="active-session" hidden />}
          {!detail && (
            <p className="placeholder">
              {!ready
                ? "Loading…"
                : noWorkspaces
                  ? "Create a workspace to start."
                  : activeId && missing === activeId
                    ? "This session does not exist (any more): it was deleted, or the link is wrong. Pick one from the tree."
                    : activeId
                      ? "Loading…"
                      : "Pick a session, or start a new one."}
            </p>
          )}
          {detail && wsId && (
            <section className="session" data-testid="active-session" data-session-id={detail.id} data-status={detail.status} aria-labelledby="session-title">
              <header className="session-head">
                <div className="session-titles">
                  {renaming ? (
                    <RenameForm title={detail.title || detail.displayTitle} busy={busy} onRename={rename} onDone={() => setRenaming(false)} />
                  ) : (
                    <Flex align="center" gap="2" wrap="wrap">
                      <Heading as="h1" size="4" id="session-title" data-testid="session-title">
                        {detail.displayTitle}
                      </Heading>
                      <span data-testid="session-status">
                        <StatusBadge status={detail.status} />
                      </span>
                      {detail.archived && (
                        <Badge color="gray" variant="outline" data-testid="archived-badge">
                          archived
                        </Badge>
                      )}
                    </Flex>
                  )}
                  <button
                    type="button"
                    className="parent-link"
                    data-testid="parent-indicator"
                    data-parent-id={detail.parent?.id}
                    hidden={!detail.parent}
                    onClick={() => detail.parent && activate(detail.parent.id)}
                  >
                    Forked from {detail.parent?.displayTitle}
                  </button>
                </div>
                <div className="session-actions" role="toolbar" aria-label="Session">
                  <Button
                    variant="soft"
                    data-testid="fork-conversation"
                    title="Fork the whole conversation into a new session"
                    disabled={busy}
                    onClick={() => fork()}
                  >
                    Fork conversation
                  </Button>
                  <ComparePicker options={treeOf} busy={busy} onCompare={(id) => compare(id)} />
                  <TidyActions
                    title={detail.displayTitle}
                    archived={detail.archived}
                    descendants={descendants}
                    busy={busy}
                    onRename={rename}
                    onStartRename={() => setRenaming(true)}
                    onArchive={archive}
                    onDelete={remove}
                  />
                </div>
              </header>
              {compareWith && comparison && <CompareView cmp={comparison} onOpen={(id) => activate(id)} onClose={() => compare(undefined)} />}
              {compareWith && !comparison && <p className="placeholder">Comparing…</p>}
              {!compareWith && (
              <>
              <Conversation
                wsId={wsId}
                detail={detail}
                turns={turns}
                messages={messages}
                streams={streams}
                hasEarlier={earlier.has}
                loadingEarlier={loadingEarlier}
                onLoadEarlier={loadEarlier}
                inherited={inherited}
                marks={marks}
                busy={busy}
                onForkFrom={(id) => fork(id)}
                onOpen={(id) => activate(id)}
                approvals={approvals}
                onDecide={decide}
              />
              <form className="composer" data-testid="composer" onSubmit={send}>
                <TextArea
                  data-testid="composer-input"
                  aria-label="Message"
                  rows={3}
                  placeholder="Message the agent (Ctrl+Enter to send)"
                  value={draft}
                  onChange={(e) => setDraft(e.target.value)}
                  onKeyDown={(e) => {
                    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
                      e.preventDefault();
                      e.currentTarget.form?.requestSubmit();
                    }
                  }}
                />
                <div className="composer-buttons">
                  <Button type="submit" data-testid="send" disabled={busy || working}>
                    Send
                  </Button>
                  <Button type="button" color="red" variant="soft" data-testid="interrupt" hidden={!running} disabled={busy} onClick={stop}>
                    Stop
                  </Button>
                </div>
              </form>
              </>
              )}
            </section>
          )}
        </main>
      </div>
    </div>
  );
}
