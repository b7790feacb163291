import { describe, expect, it } from "vitest";
import type { ExplorationBranchFieldsFragment } from "../gql/graphql";
import {
  applyBlock,
  archiveBlock,
  branchApplyOutcome,
  branchApplyText,
  changeText,
  checkDetail,
  checkText,
  comparable,
  durationText,
  noCheckText,
  ranked,
  sessionIds,
  settingsText,
  stateText,
  usageText,
} from "./exploration";

const branch = (name: string, more: Partial<ExplorationBranchFieldsFragment> = {}): ExplorationBranchFieldsFragment => ({
  name,
  state: "IDLE",
  errorCode: null,
  errorMessage: null,
  queuePosition: null,
  lastTurnStatus: "COMPLETED",
  session: { id: `s-${name}`, displayTitle: name, settings: { model: null, reasoningEffort: null, permissionModeId: null } },
  historySummarized: false,
  prompt: "p",
  rank: null,
  check: null,
  filesChanged: 1,
  linesAdded: 2,
  linesDeleted: 0,
  tokensUsed: 1200,
  durationMs: 4000,
  winner: false,
  appliedAt: null,
  toldAt: null,
  summary: null,
  summaryState: null,
  review: null,
  ...more,
});

describe("ranked", () => {
  it("shows the branches in the server's ranking, not as asked", () => {
    const x = { branches: [branch("a"), branch("b"), branch("c")], ranking: [{ name: "c" }, { name: "a" }, { name: "b" }] };
    expect(ranked(x).map((b) => b.name)).toEqual(["c", "a", "b"]);
  });
  it("puts a branch the ranking leaves out last", () => {
    const x = { branches: [branch("a"), branch("b")], ranking: [{ name: "b" }] };
    expect(ranked(x).map((b) => b.name)).toEqual(["b", "a"]);
  });
});

describe("the words", () => {
  it("states, with the queue position", () => {
    expect(stateText({ state: "QUEUED", queuePosition: 1 })).toBe("Queued (1st in line)");
    expect(stateText({ state: "QUEUED", queuePosition: 12 })).toBe("Queued (12th in line)");
    expect(stateText({ state: "QUEUED", queuePosition: 22 })).toBe("Queued (22nd in line)");
    expect(stateText({ state: "RUNNING", queuePosition: null })).toBe("Running");
    expect(stateText({ state: "ARCHIVED", queuePosition: null })).toBe("Archived");
    expect(stateText({ state: "IDLE", queuePosition: null, lastTurnStatus: "COMPLETED" })).toBe("Done");
    expect(stateText({ state: "IDLE", queuePosition: null, lastTurnStatus: "FAILED" })).toBe("Its turn failed");
    expect(stateText({ state: "IDLE", queuePosition: null, lastTurnStatus: "INTERRUPTED" })).toBe("Its turn was interrupted");
    expect(stateText({ state: "IDLE", queuePosition: null, lastTurnStatus: null })).toBe("No turn ran");
  });
  it("checks", () => {
    expect(checkText({ state: "PASSED" })).toBe("Check passed");
    expect(checkText({ state: "FAILED" })).toBe("Check failed");
    expect(checkText({ state: "TIMED_OUT" })).toBe("Check timed out");
    expect(checkText({ state: "RUNNING" })).toBe("Check running");
    expect(checkText(null)).toBe("No check");
    expect(settingsText({ model: "gpt-5", reasoningEffort: "high", permissionModeId: "read-only" })).toBe("gpt-5 · high effort · read-only");
    expect(settingsText(null)).toBe("default model · default effort · workspace-write");
    expect(checkDetail({ state: "FAILED", exitCode: 3, durationMs: 12000 })).toBe("exit 3 · took 12 s");
    expect(checkDetail({ state: "TIMED_OUT", exitCode: -1, durationMs: 1000 })).toBe("stopped at its time limit · took 1 s");
    expect(noCheckText({ state: "IDLE", lastTurnStatus: "INTERRUPTED" }, true)).toBe("No check: its turn was stopped");
    expect(noCheckText({ state: "IDLE", lastTurnStatus: "FAILED" }, true)).toBe("No check: its turn failed");
    expect(noCheckText({ state: "RUNNING", lastTurnStatus: "IN_PROGRESS" }, true)).toBe("Check runs when its turn ends");
    expect(noCheckText({ state: "IDLE", lastTurnStatus: "COMPLETED" }, true)).toBe("Check not run yet");
    expect(noCheckText({ state: "IDLE", lastTurnStatus: "COMPLETED" }, false)).toBe("No check");
  });
  it("sizes and usage", () => {
    expect(changeText(branch("a", { filesChanged: 2, linesAdded: 10, linesDeleted: 3 }))).toBe("2 files, +10 −3");
    expect(changeText(branch("a", { filesChanged: 0 }))).toBe("no changes");
    expect(changeText(branch("a", { filesChanged: null }))).toBe("change not known");
    expect(usageText(branch("a", { tokensUsed: 12345, durationMs: 65000 }))).toBe("12,345 tokens · turns took 1 min 5 s");
    expect(durationText(850)).toBe("850 ms");
    expect(durationText(120000)).toBe("2 min");
  });
});

describe("what can be done", () => {
  it("Apply to parent only on an idle branch with a session", () => {
    expect(applyBlock(branch("a"))).toBeNull();
    expect(applyBlock(branch("a", { state: "RUNNING" }))).toContain("Wait");
    expect(applyBlock(branch("a", { state: "FAILED", session: null }))).toContain("no session");
  });
  it("Archive the others needs a winner and another branch to archive", () => {
    expect(archiveBlock({ branches: [branch("a"), branch("b")], winner: null })).toContain("Mark a winner");
    expect(archiveBlock({ branches: [branch("a"), branch("b")], winner: { name: "a" } })).toBeNull();
    expect(archiveBlock({ branches: [branch("a"), branch("b", { state: "ARCHIVED" })], winner: { name: "a" } })).toContain("archived already");
  });
  it("compares only branches with a session; events come from their sessions", () => {
    const x = { branches: [branch("a"), branch("b", { state: "FAILED", session: null }), branch("c")], ranking: [{ name: "c" }, { name: "a" }, { name: "b" }] };
    expect(comparable(x).map((b) => b.name)).toEqual(["c", "a"]);
    expect(sessionIds(x)).toEqual(["s-a", "s-c"]);
  });
});

describe("branchApplyOutcome", () => {
  it("applied and told", () => {
    const o = branchApplyOutcome({ applied: true, files: [{}], conflicts: [], summary: "…", alreadyTold: false }, true);
    expect(o).toEqual({ kind: "applied", files: 1, told: true, alreadyTold: false, uncertain: false });
    expect(branchApplyText(o)).toContain("The parent was told");
  });
  it("told before: said so", () => {
    const o = branchApplyOutcome({ applied: false, files: [], conflicts: [], summary: "…", alreadyTold: true }, true);
    expect(o).toEqual({ kind: "nothing", told: false, alreadyTold: true, uncertain: false });
  });
  it("an uncertain earlier telling: nothing told, and said so", () => {
    const o = branchApplyOutcome({ applied: true, files: [{}], conflicts: [], summary: "…", alreadyTold: false, uncertain: true }, true);
    expect(o).toEqual({ kind: "applied", files: 1, told: false, alreadyTold: false, uncertain: true });
    expect(branchApplyText(o)).toContain("an earlier telling did not finish");
  });
  it("conflicts write and tell nothing", () => {
    const o = branchApplyOutcome({ applied: false, files: [], conflicts: ["a.go"], summary: null, alreadyTold: false }, true);
    expect(o).toEqual({ kind: "conflicts", paths: ["a.go"] });
    expect(branchApplyText(o)).toContain("nothing was written or told");
  });
});
