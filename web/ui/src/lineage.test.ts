import { describe, expect, it } from "vitest";
import type { SessionHeadFragment, SessionSummaryFragment } from "./gql/graphql";
import { countDescendants, forkMarks, inheritedTurns, mergeLatest, prependEarlier, sameTree } from "./lineage";
import { buildForest } from "./Tree";

const s = (id: string, parent?: string): SessionSummaryFragment => ({
  id,
  workspaceId: "w",
  title: id,
  displayTitle: id,
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

describe("buildForest", () => {
  it("nests forks under parents with levels from 1", () => {
    const forest = buildForest(sessions);
    const flat = (ns: ReturnType<typeof buildForest>): string[] => ns.flatMap((n) => [`${n.s.id}@${n.level}`, ...flat(n.children)]);
    expect(flat(forest)).toEqual(["root@1", "a@2", "a1@3", "b@2", "other@1"]);
  });
  it("makes a session whose parent is not listed (archived) a root", () => {
    expect(buildForest([s("a1", "a")]).map((n) => n.level)).toEqual([1]);
  });
});

describe("sameTree and countDescendants", () => {
  const cases: [string, string[], number][] = [
    ["root", ["a", "b", "a1"], 3],
    ["a1", ["root", "a", "b"], 0],
    ["a", ["root", "b", "a1"], 1],
    ["other", [], 0],
  ];
  for (const [id, tree, n] of cases) {
    it(id, () => {
      expect(sameTree(sessions, id).map((x) => x.id)).toEqual(tree);
      expect(countDescendants(sessions, id)).toBe(n);
    });
  }
});

const turn = (id: string, startedAt: string) => ({ id, status: "COMPLETED" as const, error: null, startedAt, completedAt: startedAt });

describe("inheritedTurns", () => {
  it("is the child's turns stored with it at the fork", () => {
    const d = {
      createdAt: "2026-01-01T00:00:01.5Z",
      parent: { id: "p", displayTitle: "p" },
      forkedFrom: { lastTurnId: "t2", forkedAtUnixMs: 0 },
    } as unknown as SessionHeadFragment;
    const turns = [turn("t1", "2026-01-01T00:00:00Z"), turn("t2", "2026-01-01T00:00:01.499999Z"), turn("c1", "2026-01-01T00:00:02Z")];
    expect([...inheritedTurns(d, turns)]).toEqual(["t1", "t2"]);
  });
  it("is empty for a root", () => {
    const d = { createdAt: "2026-01-01T00:00:09Z", parent: null, forkedFrom: null } as unknown as SessionHeadFragment;
    expect(inheritedTurns(d, [turn("t1", "2026-01-01T00:00:00Z")]).size).toBe(0);
  });
});

describe("forkMarks", () => {
  it("marks the turn forked from, and a whole fork on the last turn started before it", () => {
    const at = Date.parse("2026-01-01T00:00:05Z");
    const turns = [turn("t1", "2026-01-01T00:00:00Z"), turn("t2", "2026-01-01T00:00:01Z"), turn("t3", "2026-01-01T00:00:09Z")];
    const d = {
      forkPoints: [
        { turnId: "t1", children: [{ id: "c1", displayTitle: "c1", status: "READY", archived: false, forkedFrom: { forkedAtUnixMs: 0 } }] },
        { turnId: null, children: [{ id: "c2", displayTitle: "c2", status: "READY", archived: true, forkedFrom: { forkedAtUnixMs: at } }] },
      ],
    } as unknown as SessionHeadFragment;
    const marks = forkMarks(d, turns);
    expect(marks.get("t1")?.map((m) => m.id)).toEqual(["c1"]);
    expect(marks.get("t2")?.map((m) => m.id)).toEqual(["c2"]);
    expect(marks.has("t3")).toBe(false);
  });
});

describe("mergeLatest", () => {
  const ids = (ts: { id: string }[]) => ts.map((t) => t.id).join(" ");
  const t = (...xs: string[]) => xs.map((id) => ({ id }));
  const cases: [string, string[], string[], string, number][] = [
    ["first load", [], ["t3", "t4"], "t3 t4", 0],
    ["a new turn", ["t3", "t4"], ["t4", "t5"], "t3 t4 t5", 1],
    ["earlier pages kept", ["t1", "t2", "t3", "t4"], ["t3", "t4", "t5"], "t1 t2 t3 t4 t5", 2],
    ["same page", ["t3", "t4"], ["t3", "t4"], "t3 t4", 0],
    ["no overlap", ["t1", "t2"], ["t8", "t9"], "t8 t9", 0],
    ["no turns", ["t1"], [], "", 0],
  ];
  for (const [name, loaded, page, want, kept] of cases) {
    it(name, () => {
      const got = mergeLatest(t(...loaded), t(...page));
      expect(ids(got.turns)).toBe(want);
      expect(got.kept).toBe(kept);
    });
  }
});

describe("prependEarlier", () => {
  const ids = (ts: { id: string }[]) => ts.map((t) => t.id).join(" ");
  const t = (...xs: string[]) => xs.map((id) => ({ id }));
  const cases: [string, string[], string[], string][] = [
    ["an earlier page", ["t3", "t4"], ["t1", "t2"], "t1 t2 t3 t4"],
    ["overlapping", ["t2", "t3"], ["t1", "t2"], "t1 t2 t3"],
    ["nothing earlier", ["t1"], [], "t1"],
  ];
  for (const [name, loaded, older, want] of cases) {
    it(name, () => expect(ids(prependEarlier(t(...loaded), t(...older)))).toBe(want));
  }
});
