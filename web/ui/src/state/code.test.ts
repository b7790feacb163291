import { describe, expect, it } from "vitest";
import { languageOf, needsApply, outcomeOf, sameTreeCode, totals, totalsText, treeCode, treeCodeLabel } from "./code";

const listed = (mode: "SHARED" | "WORKTREE" | null, files: string[] = [], present = true) => ({
  archived: !present,
  code: mode ? { mode, changes: { files: files.map((path) => ({ path })) } } : null,
});
const fc = (path: string, additions = 1, deletions = 0) => ({ path, status: "MODIFIED" as const, additions, deletions });

describe("treeCode", () => {
  it("shows a worktree session with its count of changed files", () => {
    expect(treeCode(listed("WORKTREE", ["a.go", "b.go"]))).toEqual({ worktree: true, present: true, files: 2 });
    expect(treeCodeLabel(treeCode(listed("WORKTREE", ["a.go"]))!)).toBe("own worktree, 1 file changed");
    expect(treeCodeLabel(treeCode(listed("WORKTREE", [], false))!)).toBe("own worktree (archived), 0 files changed");
  });
  it("shows nothing outside a repository or in the shared folder", () => {
    expect(treeCode(listed(null))).toBeNull();
    expect(treeCode(listed("SHARED", ["a.go"]))).toBeNull();
  });
  it("compares what the tree shows", () => {
    expect(sameTreeCode(listed("WORKTREE", ["a"]), listed("WORKTREE", ["b"]))).toBe(true);
    expect(sameTreeCode(listed("WORKTREE", ["a"]), listed("WORKTREE", ["a", "b"]))).toBe(false);
    expect(sameTreeCode(listed("WORKTREE", ["a"]), listed("WORKTREE", ["a"], false))).toBe(false);
    expect(sameTreeCode(listed(null), listed("SHARED", ["x"]))).toBe(true);
    expect(sameTreeCode(listed(null), listed("WORKTREE"))).toBe(false);
  });
});

describe("totals", () => {
  it("adds the lines up", () => {
    const t = totals([fc("a", 3, 1), fc("b", 7, 1)]);
    expect(t).toEqual({ files: 2, additions: 10, deletions: 2 });
    expect(totalsText(t)).toBe("2 files, +10 −2");
    expect(totalsText(totals([fc("a", 1, 0)]))).toBe("1 file, +1 −0");
  });
});

describe("apply outcome", () => {
  const clean = { applied: false, files: [fc("a.go")], conflicts: [] };
  it("applies a clean dry run", () => {
    expect(needsApply(clean)).toBe(true);
    expect(outcomeOf(clean, { applied: true, files: [fc("a.go")], conflicts: [] })).toEqual({ kind: "applied", files: [fc("a.go")] });
  });
  it("shows the conflicts of the dry run by path, without applying", () => {
    const dry = { applied: false, files: [fc("a.go")], conflicts: ["a.go", "b/c.ts"] };
    expect(needsApply(dry)).toBe(false);
    expect(outcomeOf(dry)).toEqual({ kind: "conflicts", paths: ["a.go", "b/c.ts"] });
  });
  it("shows conflicts met by the apply itself (the target changed meanwhile)", () => {
    expect(outcomeOf(clean, { applied: false, files: [], conflicts: ["a.go"] })).toEqual({ kind: "conflicts", paths: ["a.go"] });
  });
  it("says when there is nothing to apply", () => {
    const none = { applied: false, files: [], conflicts: [] };
    expect(needsApply(none)).toBe(false);
    expect(outcomeOf(none)).toEqual({ kind: "nothing" });
  });
});

describe("languageOf", () => {
  const cases: [string, string][] = [
    ["web/ui/src/App.tsx", "tsx"],
    ["main.go", "go"],
    ["a/b/c.PY", "python"],
    ["Makefile", "makefile"],
    ["docs/README.md", "markdown"],
    ["LICENSE", ""],
    [".env", ""],
    ["x.unknownext", ""],
  ];
  for (const [p, want] of cases) it(`${p} → ${want || "none"}`, () => expect(languageOf(p)).toBe(want));
});
