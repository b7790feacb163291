import { describe, expect, it } from "vitest";
import { branchProblem, canOwnWorktree, forkRequest, startChoice } from "./forkChoice";
import type { Settings } from "./settings";

const parent: Settings = { model: "small", reasoningEffort: "low", permissionModeId: "workspace-write", planMode: false };

describe("forkRequest", () => {
  const cases: { name: string; choice: Parameters<typeof forkRequest>[1]; repo: boolean; want: ReturnType<typeof forkRequest> }[] = [
    { name: "nothing changed, same folder: a plain fork", choice: startChoice(parent), repo: true, want: {} },
    {
      name: "other settings in the same folder",
      choice: { ...startChoice(parent), settings: { ...parent, permissionModeId: "full-access" } },
      repo: true,
      want: { settings: { permissionModeId: "full-access" } },
    },
    { name: "own worktree, detached", choice: { ...startChoice(parent), place: "WORKTREE" }, repo: true, want: { code: { mode: "WORKTREE" } } },
    {
      name: "own worktree on a new branch (trimmed)",
      choice: { ...startChoice(parent), place: "WORKTREE", branch: "  try-oauth " },
      repo: true,
      want: { code: { mode: "WORKTREE", branch: "try-oauth" } },
    },
    {
      name: "own worktree with settings",
      choice: { settings: { ...parent, model: "big" }, place: "WORKTREE", branch: "" },
      repo: true,
      want: { settings: { model: "big" }, code: { mode: "WORKTREE" } },
    },
    { name: "own worktree outside a repository sends no code", choice: { ...startChoice(parent), place: "WORKTREE" }, repo: false, want: {} },
    { name: "a branch typed for the same folder is not sent", choice: { ...startChoice(parent), branch: "x" }, repo: true, want: {} },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(forkRequest(parent, c.choice, c.repo)).toEqual(c.want);
    });
  }
});

describe("canOwnWorktree", () => {
  it("needs the session's code (in a repository)", () => {
    expect(canOwnWorktree(null)).toBe(false);
    expect(canOwnWorktree(undefined)).toBe(false);
    expect(canOwnWorktree({ mode: "SHARED" })).toBe(true);
  });
});

describe("branchProblem", () => {
  const ok = ["", "try-oauth", "feature/login", "v1.2-fix"];
  const bad = ["has space", "-x", "a..b", "a~1", "x.lock", "ends/", "a:b", "@", "a//b", "a@{1}"];
  for (const b of ok) it(`accepts ${JSON.stringify(b)}`, () => expect(branchProblem(b)).toBe(""));
  for (const b of bad) it(`refuses ${JSON.stringify(b)}`, () => expect(branchProblem(b)).not.toBe(""));
});
