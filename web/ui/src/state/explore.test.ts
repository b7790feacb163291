import { describe, expect, it } from "vitest";
import { addBranch, exploreInput, hasProblems, maxBranches, minBranches, problemsOf, removeBranch, requestFor, startDraft, updateBranch, type ExploreDraft } from "./explore";
import type { Settings } from "./settings";

const parent: Settings = { model: "small", reasoningEffort: "low", permissionModeId: "workspace-write", planMode: false };
const target = { workspaceId: "w", agentSessionId: "s", lastTurnId: "t3", workspaceCheck: "go test ./..." };
const names = (d: ExploreDraft) => d.branches.map((b) => b.name);

describe("the draft's branches", () => {
  it("starts with a and b on the parent's settings and the workspace's check", () => {
    const d = startDraft(parent, "npm test");
    expect(names(d)).toEqual(["a", "b"]);
    expect(d.branches.every((b) => b.settings === parent && b.prompt === "")).toBe(true);
    expect(d.check).toBe("npm test");
  });
  it("adds up to 8, named with the next free letter", () => {
    let d = startDraft(parent, "");
    for (let i = 0; i < 10; i++) d = addBranch(d, parent);
    expect(d.branches).toHaveLength(maxBranches);
    expect(names(d)).toEqual(["a", "b", "c", "d", "e", "f", "g", "h"]);
  });
  it("removes down to 2, and a removed letter is reused", () => {
    let d = addBranch(startDraft(parent, ""), parent);
    d = removeBranch(d, d.branches[0].key);
    expect(names(d)).toEqual(["b", "c"]);
    expect(removeBranch(d, d.branches[0].key).branches).toHaveLength(minBranches);
    expect(names(addBranch(d, parent))).toEqual(["b", "c", "a"]);
  });
  it("keeps each branch's key through removals", () => {
    let d = addBranch(startDraft(parent, ""), parent);
    const keyOfC = d.branches[2].key;
    d = removeBranch(d, d.branches[1].key);
    expect(d.branches[1].key).toBe(keyOfC);
  });
});

describe("problemsOf", () => {
  const withPrompt = (d: ExploreDraft) => ({ ...d, prompt: "try it" });
  it("none for the started draft with a shared prompt", () => {
    expect(hasProblems(problemsOf(withPrompt(startDraft(parent, ""))))).toBe(false);
  });
  it("a branch without a prompt when none is shared", () => {
    let d = startDraft(parent, "");
    d = updateBranch(d, d.branches[0].key, { prompt: "own" });
    const p = problemsOf(d);
    expect(p.prompt).toContain("branch b");
    expect(p.names.size).toBe(0);
  });
  it("every branch with its own prompt needs no shared one", () => {
    let d = startDraft(parent, "");
    for (const b of d.branches) d = updateBranch(d, b.key, { prompt: "own" });
    expect(hasProblems(problemsOf(d))).toBe(false);
  });
  const bad = ["", "A", "-x", "has space", "x".repeat(33), "a_b"];
  for (const name of bad) {
    it(`refuses the name ${JSON.stringify(name)}`, () => {
      let d = withPrompt(startDraft(parent, ""));
      d = updateBranch(d, d.branches[0].key, { name });
      expect(problemsOf(d).names.get(d.branches[0].key)).toBeTruthy();
    });
  }
  it("refuses the same name twice, on both", () => {
    let d = withPrompt(startDraft(parent, ""));
    d = updateBranch(d, d.branches[1].key, { name: " a " });
    expect([...problemsOf(d).names.values()]).toEqual(["Another branch has this name.", "Another branch has this name."]);
  });
});

describe("exploreInput", () => {
  it("sends the turn, the shared prompt, each branch's name and only the settings changed; the workspace's check is not repeated", () => {
    let d = { ...startDraft(parent, target.workspaceCheck), prompt: "add login" };
    d = updateBranch(d, d.branches[0].key, { settings: { ...parent, model: "mock-pass" } });
    d = updateBranch(d, d.branches[1].key, { settings: { ...parent, reasoningEffort: "high" }, prompt: "use JWT" });
    expect(exploreInput(d, parent, target)).toEqual({
      workspaceId: "w",
      agentSessionId: "s",
      lastTurnId: "t3",
      prompt: "add login",
      branches: [
        { name: "a", settings: { model: "mock-pass" } },
        { name: "b", prompt: "use JWT", settings: { reasoningEffort: "high" } },
      ],
    });
  });
  it("sends a changed check command, and an emptied one as \"\" (no check)", () => {
    const d = { ...startDraft(parent, target.workspaceCheck), prompt: "p" };
    expect(exploreInput({ ...d, check: "sh check.sh" }, parent, target).checkCommand).toBe("sh check.sh");
    expect(exploreInput({ ...d, check: "  " }, parent, target).checkCommand).toBe("");
    expect(exploreInput({ ...d, check: "sh check.sh" }, parent, { ...target, workspaceCheck: "" }).checkCommand).toBe("sh check.sh");
    expect("checkCommand" in exploreInput({ ...d, check: "" }, parent, { ...target, workspaceCheck: "" })).toBe(false);
  });
});

describe("requestFor", () => {
  let n = 0;
  const fresh = () => `r${++n}`;
  const input = exploreInput({ ...startDraft(parent, ""), prompt: "p" }, parent, target);
  it("the same input again keeps its requestId (a retry replays); another input gets a fresh one", () => {
    const first = requestFor(null, input, fresh);
    expect(requestFor(first, { ...input }, fresh).requestId).toBe(first.requestId);
    expect(requestFor(first, { ...input, prompt: "q" }, fresh).requestId).not.toBe(first.requestId);
  });
});
