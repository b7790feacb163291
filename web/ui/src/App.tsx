// The GUI: a workspace's fork tree on the left, the shown session on the
// right. The state lives in hooks (state/), one per thing shown; the URL
// hash follows what is shown (useNavigation); the activity subscription
// keeps it current (useActivity, whose events reduceActivity maps to
// reloads).
import { useCallback, useMemo, useRef, useState } from "react";
import { newRequestId, query } from "./client";
import { CodeChanges } from "./CodeChanges";
import { CodexSignIn } from "./CodexSignIn";
import { CompareView } from "./Compare";
import { ExplorationLinks } from "./ExplorationLinks";
import { ExplorationView } from "./Exploration";
import { ExploreDialog } from "./ExploreDialog";
import { ForkDialog } from "./ForkDialog";
import { Composer } from "./Composer";
import { Conversation } from "./Conversation";
import { ErrorBanner } from "./ErrorBanner";
import { Warnings } from "./Warnings";
import { countDescendants, sameTree } from "./lineage";
import { SessionHeader } from "./SessionHeader";
import { Sidebar } from "./Sidebar";
import { SignIn } from "./SignIn";
import { SessionChangesPatchDocument, WorkspaceSettingsDocument, type ApprovalDecision, type CreateWorkspaceInput, type ExploreSessionInput, type UpdateWorkspaceInput } from "./gql/graphql";
import { settingsFields, type SettingsFields } from "./state/workspaceForm";
import type { Effect, Shown } from "./state/activity";
import { actions } from "./state/actions";
import { exploreActions } from "./state/exploreActions";
import { useActivity } from "./state/useActivity";
import { useCodexAccount } from "./state/useCodexAccount";
import { useModels } from "./state/useModels";
import { useRateLimits } from "./state/useRateLimits";
import { fromSession, startSettings, toInput, type Settings } from "./state/settings";
import type { ForkRequest } from "./state/forkChoice";
import { useComparison } from "./state/useComparison";
import { useExploration } from "./state/useExploration";
import { useNavigation } from "./state/useNavigation";
import { useOperations } from "./state/useOperations";
import { useSessionList } from "./state/useSessionList";
import { useShownSession } from "./state/useShownSession";
import { useWorkspaces } from "./state/useWorkspaces";
import { unavailable, withAvailability } from "./state/availability";
import { useAvailabilityPoll } from "./state/useAvailabilityPoll";
import { TopBar } from "./TopBar";

export function App() {
  const ops = useOperations();
  const { guarded, fail } = ops;
  const account = useCodexAccount(fail);
  ops.notSignedIn.current = (message) => account.dispatch({ type: "notSignedIn", message });
  const workspaces = useWorkspaces();
  const list = useSessionList(workspaces.current);
  const shown = useShownSession(workspaces.current, guarded);
  const comparison = useComparison(workspaces.current, shown.current);
  const exploration = useExploration(workspaces.current, shown.current);
  const [draft, setDraft] = useState("");
  const models = useModels();
  const rate = useRateLimits();
  // The New session settings the person chose, sent whole (null: none
  // chosen, the session gets Codex's defaults).
  const [chosen, setChosen] = useState<Settings | null>(null);
  const newSettings = useMemo(() => chosen ?? startSettings(models), [chosen, models]);
  // The fork dialog: open on a session, for the whole conversation (from
  // null) or up to a turn.
  const [forking, setForking] = useState<{ sessionId: string; from: { turnId: string; text: string } | null } | null>(null);
  // The Explore dialog: open on a session, from a turn, with the
  // workspace's check (read when it opens).
  const [exploringFrom, setExploringFrom] = useState<{ sessionId: string; from: { turnId: string; text: string }; check: string; timeoutSeconds: number } | null>(null);

  // What an activity event concerns, read when it arrives.
  const { now: shownNow } = shown;
  const { current: comparingWith } = comparison;
  const { now: explorationNow } = exploration;
  const now = useCallback((): Shown => ({ ...shownNow(), compareWith: comparingWith(), exploration: explorationNow() }), [shownNow, comparingWith, explorationNow]);

  const apply = (e: Effect) => {
    if (typeof e !== "string") {
      if ("forkChild" in e) return shown.patchForkChild(e.forkChild);
      if ("forkMade" in e) {
        if (!shown.addForkChild(e.forkMade)) void guarded(shown.refresh);
        return;
      }
      if ("listed" in e) {
        const id = e.listed;
        return void guarded(() => list.refreshRow(id));
      }
      if (!("patch" in e)) {
        rate.reload();
        return account.dispatch({ type: "updated", account: e.account, error: e.error });
      }
      // Not listed yet (its row is being read: events of a new session
      // follow its SESSION_CREATED at once), or moved: its row.
      const id = e.patch.id;
      if (!list.patch(e.patch)) void guarded(() => list.refreshRow(id));
      return;
    }
    switch (e) {
      case "sessions":
        return void guarded(list.refresh);
      case "active":
        return void guarded(shown.refresh);
      case "compare":
        return void guarded(comparison.refresh);
      case "close":
        return nav.activate(undefined, false);
      case "signIn":
        return ops.needSignIn();
      case "usage":
        return rate.reload();
      case "exploration":
        return void guarded(exploration.refresh);
      case "explorations":
        return void guarded(exploration.refreshList);
    }
  };
  const activity = useActivity(workspaces.wsId, now, apply, fail);
  const nav = useNavigation({ workspaces, list, shown, comparison, exploration, showOther: activity.showOther, guarded, fail });

  const { wsId } = workspaces;
  const { activeId, head } = shown;
  const act = actions({
    act: ops.act,
    wsId,
    activeId,
    parentId: head?.parent?.id,
    runningTurnId: shown.running?.id,
    refreshSessions: list.refresh,
    refreshShown: shown.refresh,
    reloadWorkspaces: workspaces.reload,
    activate: nav.activate,
    selectWorkspace: nav.selectWorkspace,
    clearDraft: (text) => setDraft((d) => (d === text ? "" : d)),
  });

  const xa = exploreActions({
    act: ops.act,
    wsId,
    activeId,
    explorationId: exploration.explorationId,
    show: (x) => nav.explore(x.id, true, x),
    put: exploration.put,
    refreshExploration: exploration.refresh,
    refreshList: exploration.refreshList,
    refreshSessions: list.refresh,
  });

  // turnWords: a turn named by its first words.
  const turnWords = (turnId: string) => {
    const text = shown.messages.find((m) => m.turnId === turnId && m.role === "user")?.text ?? "";
    return text.length > 80 ? text.slice(0, 79) + "…" : text;
  };
  // openFork opens the fork dialog on the shown session, up to a turn
  // (named by its first words) or for the whole conversation.
  const openFork = (turnId?: string) => {
    if (!activeId) return;
    setExploringFrom(null);
    setForking({ sessionId: activeId, from: turnId ? { turnId, text: turnWords(turnId) } : null });
  };
  // openExplore opens the Explore dialog from a turn, with the
  // workspace's check command as it is now.
  const openExplore = (turnId: string) => {
    if (!activeId || !wsId) return;
    const sessionId = activeId;
    const from = { turnId, text: turnWords(turnId) };
    setForking(null);
    void guarded(async () => {
      const d = await query(WorkspaceSettingsDocument, { ws: wsId });
      if (sessionId !== latest.current.activeId) return;
      setExploringFrom({ sessionId, from, check: d.workspace?.checkCommand ?? "", timeoutSeconds: d.workspace?.checkTimeoutSeconds ?? 600 });
    });
  };
  // Callbacks that stay the same across renders, so that the memoized
  // conversation does not re-render when only the session list changed.
  const latest = useRef({ act, nav, openFork, openExplore, wsId, activeId, xa, guarded, shown, account, list, chosen });
  latest.current = { act, nav, openFork, openExplore, wsId, activeId, xa, guarded, shown, account, list, chosen };
  // The top bar's and the sidebar's (memoized: their selects re-render,
  // and Chromium re-lays the page out, on every render of the page).
  const onPickWorkspace = useCallback((ws: string) => latest.current.nav.selectWorkspace(ws), []);
  const onCreateWorkspace = useCallback((input: CreateWorkspaceInput, created: () => void) => latest.current.act.createWorkspace(input, created), []);
  const onLoadSettings = useCallback(async (ws: string) => {
    let out: SettingsFields | null = null;
    await latest.current.guarded(async () => {
      const d = await query(WorkspaceSettingsDocument, { ws });
      if (d.workspace) out = settingsFields(d.workspace);
    });
    return out;
  }, []);
  const onSaveSettings = useCallback((input: UpdateWorkspaceInput, saved: () => void) => latest.current.act.updateWorkspace(input, saved), []);
  const onCodexSignIn = useCallback(() => latest.current.account.dispatch({ type: "open" }), []);
  const onCodexSignOut = useCallback(() => void latest.current.account.signOut(), []);
  const onNewSession = useCallback(() => {
    const { act: a, chosen: c } = latest.current;
    a.newSession(c ? toInput(c) : undefined);
  }, []);
  const onShowArchived = useCallback((show: boolean) => {
    const { list: l, guarded: g } = latest.current;
    l.setShowArchived(show);
    void g(l.refresh);
  }, []);
  const onOpen = useCallback((id: string) => latest.current.nav.activate(id), []);
  const onForkFrom = useCallback((turnId: string) => latest.current.openFork(turnId), []);
  const onExploreFrom = useCallback((turnId: string) => latest.current.openExplore(turnId), []);
  const onApply = useCallback(() => latest.current.act.applyToParent(), []);
  // The exploration view's (memoized: the page re-renders on every list
  // refresh and session patch while the branches run).
  const onCompareSessions = useCallback((a: string, b: string) => latest.current.nav.compareSessions(a, b), []);
  const onMarkWinner = useCallback((name: string | null) => void latest.current.xa.markWinner(name), []);
  const onReviewBranch = useCallback((name: string) => void latest.current.xa.review(name), []);
  const onApplyBranch = useCallback((name: string, tell: boolean, again?: boolean) => latest.current.xa.apply(name, tell, again), []);
  const onArchiveOthers = useCallback(() => latest.current.xa.archiveOthers(), []);
  const onStopExploration = useCallback(() => latest.current.xa.stop(), []);
  const onCloseExploration = useCallback(() => {
    const { nav: n, guarded: g, shown: sh } = latest.current;
    n.explore(undefined);
    // An apply changed the session's files meanwhile.
    void g(sh.refresh);
  }, []);
  // The shown session's changes as a patch, read when the diff is opened.
  const loadPatch = useCallback(async () => {
    const { wsId: ws, activeId: id } = latest.current;
    if (!ws || !id) return null;
    let out: { patch: string; truncated: boolean } | null = null;
    await guarded(async () => {
      const d = await query(SessionChangesPatchDocument, { ws, id });
      const c = d.session?.code?.changes;
      if (c && id === latest.current.activeId) out = { patch: c.patch, truncated: c.truncated };
    });
    return out;
  }, [guarded]);
  const onDecide = useCallback((approvalId: string, decision: ApprovalDecision) => void latest.current.act.decide(approvalId, decision), []);
  // Sessions whose owner instance is down, polled (no event says an
  // instance went down or came back).
  const reasons = useAvailabilityPoll(wsId);
  const listed = useMemo(() => (reasons ? withAvailability(list.sessions, reasons) : list.sessions), [list.sessions, reasons]);
  // The poll is the fresher; the header's own fields until it answers.
  const shownUnavailable = reasons ? ((activeId && reasons.get(activeId)) ?? null) : unavailable(head);
  const treeOf = useMemo(() => sameTree(list.sessions, activeId), [list.sessions, activeId]);
  const descendants = useMemo(() => countDescendants(list.sessions, activeId), [list.sessions, activeId]);

  if (ops.signIn) return <SignIn />;

  const noWorkspaces = workspaces.workspaces !== null && workspaces.workspaces.length === 0;
  const { compareWith, comparison: cmp } = comparison;

  return (
    <div className="app">
      <TopBar workspaces={workspaces.workspaces} wsId={wsId} conn={activity.conn} busy={ops.busy} onPick={onPickWorkspace} onCreate={onCreateWorkspace}
        onLoadSettings={onLoadSettings}
        onSaveSettings={onSaveSettings}
        account={account.account}
        rateLimits={rate.limits}
        onCodexSignIn={onCodexSignIn}
        onCodexSignOut={onCodexSignOut}
      />
      <CodexSignIn acc={account} />
      <ErrorBanner error={ops.error} onDismiss={ops.dismiss} />
      <Warnings warnings={activity.warnings} activeId={activeId} onDismiss={activity.dismissWarning} />
      <div className="layout">
        <Sidebar
          wsId={wsId}
          sessions={listed}
          activeId={activeId}
          busy={ops.busy}
          showArchived={list.showArchived}
          onNew={onNewSession}
          models={models}
          newSettings={newSettings}
          onNewSettings={setChosen}
          onSelect={onOpen}
          onShowArchived={onShowArchived}
        />
        <main className="main">
          {!head && <section data-testid="active-session" hidden />}
          {!head && (
            <p className="placeholder">
              {!nav.ready
                ? "Loading…"
                : noWorkspaces
                  ? "Create a workspace to start."
                  : activeId && shown.missing === activeId
                    ? "This session does not exist (any more): it was deleted, or the link is wrong. Pick one from the tree."
                    : activeId
                      ? "Loading…"
                      : "Pick a session, or start a new one."}
            </p>
          )}
          {head && wsId && (
            <section className="session" data-testid="active-session" data-session-id={head.id} data-status={head.status} aria-labelledby="session-title">
              <SessionHeader
                head={head}
                busy={ops.busy}
                unavailable={shownUnavailable}
                sameTree={treeOf}
                descendants={descendants}
                onOpen={(id) => nav.activate(id)}
                onFork={() => openFork()}
                onCompare={(id) => nav.compare(id)}
                onRename={act.rename}
                onArchive={act.archive}
                onDelete={act.remove}
              />
              {forking && forking.sessionId === head.id && (
                <ForkDialog
                  key={`${head.id}:${forking.from?.turnId ?? ""}`}
                  parent={fromSession(head.settings)}
                  code={head.code}
                  models={models}
                  busy={ops.busy}
                  from={forking.from}
                  onClose={() => setForking(null)}
                  onFork={(req: ForkRequest) => {
                    void act.fork(forking.from?.turnId, req.settings, req.code).then((ok) => {
                      if (ok) setForking(null);
                    });
                  }}
                />
              )}
              {exploringFrom && exploringFrom.sessionId === head.id && (
                <ExploreDialog
                  key={`${head.id}:${exploringFrom.from.turnId}`}
                  parent={fromSession(head.settings)}
                  models={models}
                  busy={ops.busy}
                  from={exploringFrom.from}
                  target={{ workspaceId: wsId, agentSessionId: head.id, lastTurnId: exploringFrom.from.turnId, workspaceCheck: exploringFrom.check }}
                  checkTimeoutSeconds={exploringFrom.timeoutSeconds}
                  requestId={newRequestId}
                  onClose={() => setExploringFrom(null)}
                  // Started: the exploration replaced the conversation (and
                  // the button that opened the dialog); its title takes focus.
                  onFocusLost={() => document.getElementById("exploration-title")?.focus()}
                  onStart={async (input: ExploreSessionInput) => {
                    const err = await xa.start(input);
                    if (!err) setExploringFrom(null);
                    return err;
                  }}
                />
              )}
              {compareWith && cmp && <CompareView cmp={cmp} onOpen={(id) => nav.activate(id)} onClose={() => nav.compare(undefined)} />}
              {compareWith && !cmp && <p className="placeholder">Comparing…</p>}
              {!compareWith && exploration.explorationId && exploration.exploration && (
                <ExplorationView
                  wsId={wsId}
                  x={exploration.exploration}
                  busy={ops.busy}
                  onOpen={onOpen}
                  onCompare={onCompareSessions}
                  onMarkWinner={onMarkWinner}
                  onReview={onReviewBranch}
                  onApply={onApplyBranch}
                  onArchiveOthers={onArchiveOthers}
                  onStop={onStopExploration}
                  onClose={onCloseExploration}
                />
              )}
              {!compareWith && exploration.explorationId && !exploration.exploration && <p className="placeholder">Loading the exploration…</p>}
              {!compareWith && !exploration.explorationId && (
                <>
                  {exploration.listed && exploration.listed.id === head.id && <ExplorationLinks wsId={wsId} listed={exploration.listed} onOpen={nav.openExploration} />}
                  {head.code && <CodeChanges key={head.id} code={head.code} hasParent={!!head.parent} busy={ops.busy} loadPatch={loadPatch} onApply={onApply} />}
                  <Conversation
                    wsId={wsId}
                    head={head}
                    turns={shown.turns}
                    messages={shown.messages}
                    streams={activity.streams}
                    retries={activity.retries}
                    hasEarlier={shown.hasEarlier}
                    loadingEarlier={shown.loadingEarlier}
                    onLoadEarlier={shown.loadEarlier}
                    inherited={shown.inherited}
                    marks={shown.marks}
                    busy={ops.busy}
                    unavailable={shownUnavailable}
                    onForkFrom={onForkFrom}
                    exploreBlocked={head.code ? null : "Explore needs the session's folder in a git repository (each branch gets a worktree of its own)"}
                    onExploreFrom={onExploreFrom}
                    onOpen={onOpen}
                    approvals={shown.approvals}
                    onDecide={onDecide}
                  />
                  <Composer
                    draft={draft}
                    onDraft={setDraft}
                    busy={ops.busy}
                    unavailable={shownUnavailable}
                    working={head.status === "WORKING" || !!shown.running}
                    running={!!shown.running}
                    onSend={() => act.send(draft)}
                    onStop={act.stop}
                    onSteer={() => act.steer(draft)}
                  />
                </>
              )}
            </section>
          )}
        </main>
      </div>
    </div>
  );
}
