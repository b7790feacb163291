// What the person does: each action runs one mutation while the page is
// busy, then shows its outcome (the new session, workspace, or the
// session reloaded).
import { ApiError, mutate, newRequestId } from "../client";
import {
  ApplySessionChangesDocument,
  CreateWorkspaceDocument,
  DeleteSessionDocument,
  ForkSessionDocument,
  InterruptTurnDocument,
  RespondToApprovalDocument,
  SendMessageDocument,
  StartSessionDocument,
  SteerTurnDocument,
  UpdateSessionDocument,
  UpdateWorkspaceDocument,
  type ApprovalDecision,
  type ComposerSettingsInput,
  type CreateWorkspaceInput,
  type ForkCodeInput,
  type UpdateWorkspaceInput,
} from "../gql/graphql";
import { needsApply, outcomeOf, type ApplyOutcome } from "./code";

interface Deps {
  act: (fn: () => Promise<void>) => Promise<void>;
  wsId?: string;
  activeId?: string;
  parentId?: string;
  runningTurnId?: string;
  refreshSessions: () => Promise<void>;
  refreshShown: () => Promise<void>;
  reloadWorkspaces: () => Promise<unknown>;
  activate: (id: string | undefined) => void;
  selectWorkspace: (ws: string) => void;
  // clearDraft empties the composer if it still holds text.
  clearDraft: (text: string) => void;
}

export function actions(d: Deps) {
  const { act, wsId, activeId } = d;
  const refreshBoth = () => Promise.all([d.refreshSessions(), d.refreshShown()]).then(() => undefined);

  return {
    // fork makes the child and shows it; it resolves to whether it did
    // (the fork dialog stays open on a failure, the banner says why).
    fork: async (lastTurnId?: string, settings?: ComposerSettingsInput, code?: ForkCodeInput): Promise<boolean> => {
      let ok = false;
      await act(async () => {
        if (!wsId || !activeId) return;
        const r = await mutate(ForkSessionDocument, { input: { workspaceId: wsId, agentSessionId: activeId, requestId: newRequestId(), lastTurnId, settings, code } });
        ok = true;
        d.activate(r.forkSession.session.id);
        await d.refreshSessions();
      });
      return ok;
    },

    // applyToParent brings the shown worktree session's changes into its
    // parent's files: a dry run first, applied only when it is clean.
    // Resolves to what happened (null: the call failed, the banner says
    // why).
    applyToParent: async (): Promise<ApplyOutcome | null> => {
      let out: ApplyOutcome | null = null;
      await act(async () => {
        if (!wsId || !activeId) return;
        const input = { workspaceId: wsId, agentSessionId: activeId };
        const dry = (await mutate(ApplySessionChangesDocument, { input: { ...input, dryRun: true } })).applySessionChanges;
        const real = needsApply(dry) ? (await mutate(ApplySessionChangesDocument, { input })).applySessionChanges : undefined;
        out = outcomeOf(dry, real);
        await refreshBoth();
      });
      return out;
    },

    send: (text: string) => {
      if (!text.trim() || !wsId || !activeId) return;
      void act(async () => {
        await mutate(SendMessageDocument, { input: { workspaceId: wsId, agentSessionId: activeId, text } });
        // The typed text is cleared only once the server took it.
        d.clearDraft(text);
        await d.refreshShown();
      });
    },

    // steer adds the draft to the running turn (steerTurn) without
    // stopping it.
    steer: (text: string) => {
      if (!text.trim() || !wsId || !activeId || !d.runningTurnId) return;
      const turnId = d.runningTurnId;
      void act(async () => {
        await mutate(SteerTurnDocument, { input: { workspaceId: wsId, agentSessionId: activeId, turnId, text } });
        d.clearDraft(text);
        await d.refreshShown();
      });
    },

    stop: () =>
      act(async () => {
        if (!wsId || !activeId || !d.runningTurnId) return;
        await mutate(InterruptTurnDocument, { input: { workspaceId: wsId, agentSessionId: activeId, turnId: d.runningTurnId } });
        await d.refreshShown();
      }),

    newSession: (settings?: ComposerSettingsInput) =>
      act(async () => {
        if (!wsId) return;
        const r = await mutate(StartSessionDocument, { input: { workspaceId: wsId, settings } });
        d.activate(r.startSession.id);
        await d.refreshSessions();
      }),

    createWorkspace: (input: CreateWorkspaceInput, created: () => void) =>
      act(async () => {
        const r = await mutate(CreateWorkspaceDocument, { input });
        created();
        await d.reloadWorkspaces();
        d.selectWorkspace(r.createWorkspace.id);
      }),

    // updateWorkspace saves a workspace's settings; saved runs once the
    // server took them.
    updateWorkspace: (input: UpdateWorkspaceInput, saved: () => void) =>
      act(async () => {
        await mutate(UpdateWorkspaceDocument, { input });
        saved();
      }),

    // rename resolves to whether the title was saved.
    rename: async (title: string): Promise<boolean> => {
      let ok = false;
      await act(async () => {
        if (!wsId || !activeId) return;
        await mutate(UpdateSessionDocument, { input: { workspaceId: wsId, agentSessionId: activeId, title } });
        ok = true;
        await refreshBoth();
      });
      return ok;
    },

    archive: (archived: boolean) =>
      act(async () => {
        if (!wsId || !activeId) return;
        await mutate(UpdateSessionDocument, { input: { workspaceId: wsId, agentSessionId: activeId, archived } });
        await refreshBoth();
      }),

    // remove deletes the shown session with its forks and shows its parent.
    // remove deletes the shown session with its forks and shows its
    // parent. A worktree whose changes were never applied is refused
    // (agent.session_has_changes): that resolves to the server's message
    // (it names the files) for the person to confirm discarding them,
    // which discardChanges does.
    remove: async (discardChanges = false): Promise<string | null> => {
      let refused: string | null = null;
      await act(async () => {
        if (!wsId || !activeId) return;
        try {
          await mutate(DeleteSessionDocument, { input: { workspaceId: wsId, agentSessionId: activeId, subtree: true, discardChanges: discardChanges || undefined } });
        } catch (e) {
          if (e instanceof ApiError && e.code === "agent.session_has_changes") {
            refused = e.message;
            return;
          }
          throw e;
        }
        d.activate(d.parentId);
        await d.refreshSessions();
      });
      return refused;
    },

    decide: (approvalId: string, decision: ApprovalDecision) =>
      act(async () => {
        if (!wsId || !activeId) return;
        await mutate(RespondToApprovalDocument, { input: { workspaceId: wsId, agentSessionId: activeId, approvalId, decision } });
        await d.refreshShown();
      }),
  };
}
