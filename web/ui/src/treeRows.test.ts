import { describe, expect, it } from "vitest";
import type { SessionSummaryFragment } from "./gql/graphql";
import { buildForest, nodeIndex, shownIn, treeRows } from "./treeRows";

const s = (id: string, parent?: string, displayTitle = id): SessionSummaryFragment => ({
  id,
  workspaceId: "w",
  title: displayTitle,
  displayTitle,
  status: "READY",
  archived: false,
  createdAt: "",
  updatedAt: "",
  parent: parent ? { id: parent } : null,
  forkedFrom: parent ? { lastTurnId: null, forkedAtUnixMs: 0 } : null,
});

// root ─┬─ a ── a1
//       └─ b
// other
const sessions = [s("root"), s("a", "root"), s("b", "root"), s("a1", "a"), s("other")];

describe("buildForest: what it keeps of the last forest", () => {
  it("keeps every node when nothing shown changed (new session objects)", () => {
    const first = buildForest(sessions);
    const again = buildForest(sessions.map((x) => ({ ...x })), first);
    expect(again[0]).toBe(first[0]);
    expect(again[1]).toBe(first[1]);
  });
  it("renews a renamed session and its ancestors only", () => {
    const first = buildForest(sessions);
    const renamed = sessions.map((x) => (x.id === "a1" ? s("a1", "a", "renamed") : x));
    const again = buildForest(renamed, first);
    const [root, other] = again;
    expect(root).not.toBe(first[0]);
    expect(root.children[0]).not.toBe(first[0].children[0]); // a
    expect(root.children[0].children[0].s.displayTitle).toBe("renamed");
    expect(root.children[1]).toBe(first[0].children[1]); // b
    expect(other).toBe(first[1]);
  });
  it("renews two changed sessions of one branch once, and keeps going from the last build", () => {
    const first = buildForest(sessions);
    const both = sessions.map((x) => (x.id === "a1" ? s("a1", "a", "one") : x.id === "b" ? { ...s("b", "root"), status: "WORKING" as const } : x));
    const second = buildForest(both, first);
    expect(second[0].children[0].children[0].s.displayTitle).toBe("one");
    expect(second[0].children[1].s.status).toBe("WORKING");
    expect(second[1]).toBe(first[1]);
    const third = buildForest(both.map((x) => (x.id === "a1" ? s("a1", "a", "two") : x)), second);
    expect(third[0].children[0].children[0].s.displayTitle).toBe("two");
    expect(third[0].children[1]).toBe(second[0].children[1]);
    expect(treeRows(third, new Set()).map((r) => `${r.s.id}@${r.level}`)).toEqual(["root@1", "a@2", "a1@3", "b@2", "other@1"]);
  });
  it("renews a parent whose forks changed", () => {
    const first = buildForest(sessions);
    const again = buildForest([...sessions, s("b1", "b")], first);
    expect(again[0].children[1]).not.toBe(first[0].children[1]);
    expect(again[0].children[1].children.map((n) => n.s.id)).toEqual(["b1"]);
    expect(again[0].children[0]).toBe(first[0].children[0]);
  });
  it("takes levels from 1 down a chain deeper than a stack of calls", () => {
    const chain = Array.from({ length: 20000 }, (_, i) => s(`c${i}`, i ? `c${i - 1}` : undefined));
    const rows = treeRows(buildForest(chain), new Set());
    expect(rows.length).toBe(20000);
    expect(rows[19999].level).toBe(20000);
  });
});

describe("treeRows", () => {
  it("lists the sessions in document order with their place among their siblings", () => {
    const rows = treeRows(buildForest(sessions), new Set());
    expect(rows.map((r) => [r.s.id, r.level, r.posInSet, r.setSize, r.parentId ?? "", r.hidden])).toEqual([
      ["root", 1, 1, 2, "", false],
      ["a", 2, 1, 2, "root", false],
      ["a1", 3, 1, 1, "a", false],
      ["b", 2, 2, 2, "root", false],
      ["other", 1, 2, 2, "", false],
    ]);
  });
  it("hides what a collapsed branch holds, not the branch", () => {
    const rows = treeRows(buildForest(sessions), new Set(["root"]));
    expect(rows.filter((r) => !r.hidden).map((r) => r.s.id)).toEqual(["root", "other"]);
    expect(rows.find((r) => r.s.id === "root")?.open).toBe(false);
    expect(rows.find((r) => r.s.id === "a")?.open).toBe(true);
  });
});

describe("shownIn", () => {
  const forest = buildForest(sessions);
  const byId = nodeIndex(forest);
  it("is whether no ancestor is collapsed", () => {
    expect(shownIn(byId, new Set(), "a1")).toBe(true);
    expect(shownIn(byId, new Set(["root"]), "a1")).toBe(false);
    expect(shownIn(byId, new Set(["a1"]), "a1")).toBe(true);
    expect(shownIn(byId, new Set(["root"]), "root")).toBe(true);
    expect(shownIn(byId, new Set(), "unknown")).toBe(false);
    expect(shownIn(byId, new Set(), undefined)).toBe(false);
  });
});

describe("buildForest: the code badge", () => {
  const code = (files: number) => ({ mode: "WORKTREE" as const, changes: { files: Array.from({ length: files }, (_, i) => ({ path: `f${i}` })) } });
  it("renews a session whose count of changed files changed, on a reload", () => {
    const first = buildForest(sessions.map((x) => (x.id === "b" ? { ...x, code: code(1) } : x)));
    const again = buildForest(sessions.map((x) => (x.id === "b" ? { ...x, code: code(2) } : { ...x })), first);
    expect(again[0].children[1]).not.toBe(first[0].children[1]);
    expect(again[0].children[1].s.code?.changes.files).toHaveLength(2);
    expect(again[1]).toBe(first[1]);
  });
  it("keeps a session whose badge shows the same", () => {
    const first = buildForest(sessions.map((x) => (x.id === "b" ? { ...x, code: code(1) } : x)));
    const again = buildForest(sessions.map((x) => (x.id === "b" ? { ...x, code: code(1) } : { ...x })), first);
    expect(again[0]).toBe(first[0]);
  });
});
