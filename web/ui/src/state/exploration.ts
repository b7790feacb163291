// The exploration view's words and order (issue 32), as pure functions:
// the branches in the server's ranking, each one's state, check, change
// size and usage as text, and why an action cannot be taken now.
import type { CheckRunFieldsFragment, ExplorationBranchFieldsFragment, ExplorationFieldsFragment } from "../gql/graphql";

type Branch = ExplorationBranchFieldsFragment;

// ranked: the branches best first (Exploration.ranking, which names every
// branch; one it leaves out goes last, as asked).
export function ranked(x: Pick<ExplorationFieldsFragment, "branches" | "ranking">): Branch[] {
  const byName = new Map(x.branches.map((b) => [b.name, b]));
  const out: Branch[] = [];
  for (const r of x.ranking) {
    const b = byName.get(r.name);
    if (b) {
      out.push(b);
      byName.delete(r.name);
    }
  }
  return [...out, ...byName.values()];
}

function ordinal(n: number): string {
  const s = n % 100 >= 11 && n % 100 <= 13 ? "th" : ({ 1: "st", 2: "nd", 3: "rd" } as Record<number, string>)[n % 10] ?? "th";
  return `${n}${s}`;
}

// stateText: the branch's state as words, with its place in the queue;
// an idle branch says how its latest turn ended.
export function stateText(b: Pick<Branch, "state" | "queuePosition"> & { lastTurnStatus?: Branch["lastTurnStatus"] }): string {
  switch (b.state) {
    case "FORKING":
      return "Forking";
    case "QUEUED":
      return b.queuePosition ? `Queued (${ordinal(b.queuePosition)} in line)` : "Queued";
    case "RUNNING":
      return "Running";
    case "IDLE":
      switch (b.lastTurnStatus) {
        case "FAILED":
          return "Its turn failed";
        case "INTERRUPTED":
          return "Its turn was interrupted";
        case null:
          return "No turn ran";
      }
      return "Done";
    case "FAILED":
      return "Failed";
    case "ARCHIVED":
      return "Archived";
    case "STOPPED":
      return "Stopped before it started";
  }
}

// checkText: the check of the branch's latest turn.
export function checkText(c: Pick<CheckRunFieldsFragment, "state"> | null | undefined): string {
  if (!c) return "No check";
  switch (c.state) {
    case "RUNNING":
      return "Check running";
    case "PASSED":
      return "Check passed";
    case "FAILED":
      return "Check failed";
    case "TIMED_OUT":
      return "Check timed out";
    case "ERROR":
      return "Check could not run";
    case "INTERRUPTED":
      return "Check interrupted";
  }
}

// noCheckText: why a branch shows no check: none set, its turn still
// running, its turn stopped or failed (no check runs then), or not yet.
export function noCheckText(b: Pick<Branch, "state"> & { lastTurnStatus?: Branch["lastTurnStatus"] }, hasCheck: boolean): string {
  if (!hasCheck) return "No check";
  if (b.state === "RUNNING" || b.state === "QUEUED" || b.state === "FORKING") return "Check runs when its turn ends";
  switch (b.lastTurnStatus) {
    case "INTERRUPTED":
      return "No check: its turn was stopped";
    case "FAILED":
      return "No check: its turn failed";
  }
  return "Check not run yet";
}

// checkDetail: the exit code and time after a check's result, labelled
// ("exit 3 · took 12 s"); a timed-out check has no exit code of its own.
export function checkDetail(c: Pick<CheckRunFieldsFragment, "state" | "exitCode" | "durationMs">): string {
  const parts: string[] = [];
  if (c.state === "TIMED_OUT") parts.push("stopped at its time limit");
  else if (c.exitCode != null) parts.push(`exit ${c.exitCode}`);
  if (c.durationMs != null) parts.push(`took ${durationText(c.durationMs)}`);
  return parts.join(" · ");
}

// settingsText: the branch's model, effort and permissions
// ("gpt-5 · high · workspace-write"); Codex's defaults where unset.
export function settingsText(s: { model?: string | null; reasoningEffort?: string | null; permissionModeId?: string | null } | null | undefined): string {
  return [s?.model || "default model", s?.reasoningEffort ? `${s.reasoningEffort} effort` : "default effort", s?.permissionModeId || "workspace-write"].join(" · ");
}

// durationText: "850 ms", "12 s", "3 min 5 s".
export function durationText(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  return s % 60 ? `${Math.floor(s / 60)} min ${s % 60} s` : `${s / 60} min`;
}

// changeText: "2 files, +10 −3", or why it is not known.
export function changeText(b: Pick<Branch, "filesChanged" | "linesAdded" | "linesDeleted">): string {
  if (b.filesChanged == null) return "change not known";
  if (b.filesChanged === 0) return "no changes";
  return `${b.filesChanged} file${b.filesChanged === 1 ? "" : "s"}, +${b.linesAdded ?? 0} −${b.linesDeleted ?? 0}`;
}

// One formatter for every count: toLocaleString makes a new one per call,
// which cost whole milliseconds a card in Chromium's profile.
const counts = new Intl.NumberFormat("en-US");

// usageText: "12,345 tokens · turns took 40 s".
export function usageText(b: Pick<Branch, "tokensUsed" | "durationMs">): string {
  return `${counts.format(b.tokensUsed)} tokens · turns took ${durationText(b.durationMs)}`;
}

// recommendedBranch: the branch whose Apply is the view's primary action:
// the person's winner, else the first ranked branch whose latest turn
// completed and whose check (when there is one) passed; null when none.
export function recommendedBranch(x: Pick<ExplorationFieldsFragment, "branches" | "ranking" | "winner" | "checkCommand">): string | null {
  if (x.winner) return x.winner.name;
  const best = ranked(x).find((b) => b.rank != null);
  if (!best || best.lastTurnStatus !== "COMPLETED" || best.state !== "IDLE") return null;
  if (x.checkCommand && best.check?.state !== "PASSED") return null;
  return best.name;
}

// applyRisk: why applying the branch deserves a second thought (its
// check did not pass, its turn did not complete), or null.
export function applyRisk(b: Pick<Branch, "check" | "lastTurnStatus">): string | null {
  switch (b.lastTurnStatus) {
    case "FAILED":
      return "This branch's latest turn failed.";
    case "INTERRUPTED":
      return "This branch's latest turn was interrupted.";
  }
  switch (b.check?.state) {
    case "FAILED":
      return "This branch's check failed.";
    case "TIMED_OUT":
      return "This branch's check ran out of time.";
    case "ERROR":
      return "This branch's check could not run.";
  }
  return null;
}

// applyBlock: why Apply to parent cannot run on the branch now, or null.
export function applyBlock(b: Pick<Branch, "state" | "session">): string | null {
  if (!b.session) return "This branch has no session: nothing to apply.";
  switch (b.state) {
    case "IDLE":
      return null;
    case "ARCHIVED":
      return "This branch is archived.";
    case "FAILED":
      return "This branch failed.";
    default:
      return "Wait until the branch's turn has ended.";
  }
}

// winnerBlock: why the branch cannot be marked the winner, or null.
export function winnerBlock(b: Pick<Branch, "state" | "session">): string | null {
  if (!b.session || b.state === "FAILED") return "A failed branch cannot win.";
  if (b.state === "ARCHIVED") return "This branch is archived.";
  return null;
}

// reviewBlock: why the branch cannot be reviewed now, or null.
export function reviewBlock(b: Pick<Branch, "state" | "session" | "review">): string | null {
  if (b.review?.state === "RUNNING") return "Codex is reviewing this branch.";
  if (!b.session || b.state === "FAILED") return "A failed branch has nothing to review.";
  if (b.state === "ARCHIVED") return "This branch is archived.";
  if (b.state !== "IDLE") return "Wait until the branch's turn has ended.";
  return null;
}

// archiveBlock: why `Archive the others` cannot run, or null. It keeps the
// winner, so one must be marked first.
export function archiveBlock(x: Pick<ExplorationFieldsFragment, "branches" | "winner">): string | null {
  if (!x.winner) return "Mark a winner first: it is kept, the others are archived.";
  const w = x.winner.name;
  if (!x.branches.some((b) => b.name !== w && b.session && b.state !== "ARCHIVED")) return "The others are archived already.";
  return null;
}

// comparable: the branches that can be compared (those with a session),
// best first.
export function comparable(x: Pick<ExplorationFieldsFragment, "branches" | "ranking">): Branch[] {
  return ranked(x).filter((b) => !!b.session);
}

// sessionIds: the branches' sessions (whose CHECK_UPDATED concern the
// exploration).
export function sessionIds(x: Pick<ExplorationFieldsFragment, "branches">): string[] {
  return x.branches.flatMap((b) => (b.session ? [b.session.id] : []));
}

// BranchFailure is a branch an action on several could not do, with why.
export interface BranchFailure {
  branchName: string;
  errorCode: string;
  errorMessage: string;
}

// ArchiveOutcome is what `Archive the others` did.
export interface ArchiveOutcome {
  archived: readonly string[];
  failed: readonly BranchFailure[];
}

// StopOutcome is what `Stop all` did.
export interface StopOutcome {
  interrupted: readonly string[];
  failed: readonly BranchFailure[];
}

// canStop: something of the exploration is still to start or running
// (`Stop all` is shown).
export function canStop(x: Pick<ExplorationFieldsFragment, "state">): boolean {
  return x.state === "STARTING" || x.state === "RUNNING";
}

// BranchApply is what the page says after Apply to parent on a branch.
// uncertain: an earlier telling did not finish, so nothing was told
// (Tell the parent again decides).
export type BranchApply =
  | { kind: "applied"; files: number; told: boolean; alreadyTold: boolean; uncertain: boolean }
  | { kind: "conflicts"; paths: readonly string[] }
  | { kind: "nothing"; told: boolean; alreadyTold: boolean; uncertain: boolean };

export function branchApplyOutcome(
  r: { applied: boolean; files: readonly unknown[]; conflicts: readonly string[]; summary?: string | null; alreadyTold: boolean; uncertain?: boolean },
  tell: boolean,
): BranchApply {
  if (r.conflicts.length > 0) return { kind: "conflicts", paths: r.conflicts };
  const uncertain = tell && !!r.uncertain;
  const told = tell && !!r.summary && !r.alreadyTold && !uncertain;
  if (r.applied) return { kind: "applied", files: r.files.length, told, alreadyTold: tell && r.alreadyTold, uncertain };
  return { kind: "nothing", told, alreadyTold: tell && r.alreadyTold, uncertain };
}

// branchApplyText: the outcome as a sentence.
export function branchApplyText(o: BranchApply): string {
  const tell =
    o.kind === "conflicts"
      ? ""
      : o.told
        ? " The parent was told what the branch did."
        : o.alreadyTold
          ? " The parent had been told already."
          : o.uncertain
            ? " The parent was not told: an earlier telling did not finish, and the parent may already have it."
            : "";
  switch (o.kind) {
    case "applied":
      return `Applied to the parent's files as uncommitted changes: ${o.files} file${o.files === 1 ? "" : "s"}.${tell}`;
    case "nothing":
      return `No files to apply: the parent already has these changes, or there are none.${tell}`;
    case "conflicts":
      return `Not applied, nothing was written or told: ${o.paths.length === 1 ? "1 file conflicts" : `${o.paths.length} files conflict`} with the parent's changes.`;
  }
}
