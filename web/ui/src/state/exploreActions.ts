// What the person does with explorations (issue 32), as actions.ts does
// for sessions: each runs one mutation while the page is busy, then shows
// its outcome.
import { mutate, toApiError, type ApiError } from "../client";
import {
  ApplyExplorationBranchDocument,
  ArchiveExplorationBranchesDocument,
  ExploreSessionDocument,
  MarkExplorationWinnerDocument,
  ReviewExplorationBranchDocument,
  StopExplorationDocument,
  type ExplorationFieldsFragment,
  type ExploreSessionInput,
} from "../gql/graphql";
import { branchApplyOutcome, type ArchiveOutcome, type BranchApply, type StopOutcome } from "./exploration";

interface Deps {
  act: (fn: () => Promise<void>) => Promise<void>;
  wsId?: string;
  // The explored session and the exploration shown.
  activeId?: string;
  explorationId?: string;
  // show shows a new exploration (as exploreSession answered it).
  show: (x: ExplorationFieldsFragment) => void;
  // put shows what a mutation answered for the shown exploration.
  put: (x: ExplorationFieldsFragment) => void;
  refreshExploration: () => Promise<void>;
  refreshList: () => Promise<void>;
  refreshSessions: () => Promise<void>;
}

// Codes the page handles itself (the sign-in page, Codex's sign-in
// dialog), whichever action met them.
const pageCodes = new Set(["unauthenticated", "agent.provider_not_signed_in"]);

export function exploreActions(d: Deps) {
  const { act, wsId, activeId, explorationId } = d;
  const ref = () => (wsId && activeId && explorationId ? { workspaceId: wsId, agentSessionId: activeId, explorationId } : null);

  return {
    // start makes the exploration and shows it; it resolves to null then,
    // else to why not (the dialog shows it and stays open).
    start: async (input: ExploreSessionInput): Promise<ApiError | null> => {
      let failed: ApiError | null = null;
      await act(async () => {
        let made: ExplorationFieldsFragment;
        try {
          made = (await mutate(ExploreSessionDocument, { input })).exploreSession.exploration;
        } catch (e) {
          const err = toApiError(e);
          if (pageCodes.has(err.code)) throw err;
          failed = err;
          return;
        }
        d.show(made);
        await Promise.all([d.refreshList(), d.refreshSessions()]);
      });
      return failed;
    },

    // review has Codex review the branch; the view follows it by events.
    review: (branchName: string) =>
      act(async () => {
        const r = ref();
        if (!r) return;
        await mutate(ReviewExplorationBranchDocument, { input: { ...r, branchName } });
        await d.refreshExploration();
      }),

    // markWinner marks the branch (null clears the mark).
    markWinner: (branchName: string | null) =>
      act(async () => {
        const r = ref();
        if (!r) return;
        d.put((await mutate(MarkExplorationWinnerDocument, { input: { ...r, branchName } })).markExplorationWinner);
      }),

    // apply brings the branch's files into the explored session's, and
    // with tell a summary into its conversation (again: even when an
    // earlier telling is uncertain); resolves to what happened (null: the
    // call failed, the banner says why).
    apply: async (branchName: string, tell: boolean, again = false): Promise<BranchApply | null> => {
      let out: BranchApply | null = null;
      await act(async () => {
        const r = ref();
        if (!r) return;
        const res = (await mutate(ApplyExplorationBranchDocument, { input: { ...r, branchName, tellParent: tell, tellAgain: again } })).applyExplorationBranch;
        out = branchApplyOutcome(res, tell);
        await d.refreshExploration();
      });
      return out;
    },

    // stop stops the exploration: no branch starts after it, running
    // turns and checks are interrupted.
    stop: async (): Promise<StopOutcome | null> => {
      let out: StopOutcome | null = null;
      await act(async () => {
        const r = ref();
        if (!r) return;
        const res = (await mutate(StopExplorationDocument, { input: r })).stopExploration;
        d.put(res.exploration);
        out = { interrupted: res.interrupted, failed: res.failed };
      });
      return out;
    },

    // archiveOthers archives every branch but the winner.
    archiveOthers: async (): Promise<ArchiveOutcome | null> => {
      let out: ArchiveOutcome | null = null;
      await act(async () => {
        const r = ref();
        if (!r) return;
        const res = (await mutate(ArchiveExplorationBranchesDocument, { input: r })).archiveExplorationBranches;
        d.put(res.exploration);
        out = { archived: res.archived, failed: res.failed };
        await d.refreshSessions();
      });
      return out;
    },
  };
}
