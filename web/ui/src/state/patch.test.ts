import { describe, expect, it } from "vitest";
import type { SessionHeadFragment, SessionSummaryFragment } from "../gql/graphql";
import { insertRow, listable, patchList, reapply, withForkChild, withNewForkChild } from "./patch";

const s = (id: string, more: Partial<SessionSummaryFragment> = {}): SessionSummaryFragment => ({
  id,
  workspaceId: "w",
  title: id,
  displayTitle: id,
  status: "READY",
  archived: false,
  createdAt: "",
  updatedAt: "",
  parent: null,
  forkedFrom: null,
  ...more,
});

describe("patchList", () => {
  const list = [s("a"), s("b", { parent: { id: "a" } })];
  it("puts a renamed session in place, leaving the list given as it was", () => {
    const next = patchList(list, s("b", { parent: { id: "a" }, displayTitle: "new", status: "WORKING" }));
    expect(next?.map((x) => [x.id, x.displayTitle, x.status])).toEqual([
      ["a", "a", "READY"],
      ["b", "new", "WORKING"],
    ]);
    expect(list[1].displayTitle).toBe("b");
  });
  const reloads: [string, SessionSummaryFragment][] = [
    ["a session not listed", s("c")],
    ["a session archived (its forks too)", s("a", { archived: true })],
    ["a session under another parent", s("b", { parent: null })],
  ];
  for (const [name, patch] of reloads) {
    it(`asks for a reload for ${name}`, () => {
      expect(patchList(list, patch)).toBeNull();
    });
  }
});

describe("reapply", () => {
  it("puts what arrived during a reload onto what it read", () => {
    const read = [s("a"), s("b")];
    const out = reapply(read, new Map([["b", s("b", { displayTitle: "renamed meanwhile" })]]));
    expect(out.map((x) => x.displayTitle)).toEqual(["a", "renamed meanwhile"]);
  });
  it("leaves out a patch of a session the reload no longer lists", () => {
    const read = [s("a")];
    expect(reapply(read, new Map([["gone", s("gone")]]))).toBe(read);
  });
});

describe("patchList keeps what an event does not carry", () => {
  it("keeps the listed session's code", () => {
    const code = { mode: "WORKTREE" as const, changes: { files: [{ path: "a.go" }] } };
    const listed = [{ ...s("a"), code }];
    const next = patchList(listed, s("a", { status: "WORKING" }));
    expect(next?.[0].status).toBe("WORKING");
    expect(next?.[0].code).toBe(code);
  });
});

// A session as an event carries it.
const summary = (id: string): SessionSummaryFragment => ({ id, workspaceId: "w", title: id, displayTitle: id, status: "WORKING", archived: false, createdAt: "", updatedAt: "", parent: null, forkedFrom: null });

describe("withForkChild", () => {
  const head = {
    forkPoints: [
      { turnId: "t1", children: [{ id: "c", displayTitle: "c", status: "READY", archived: false, forkedFrom: null }] },
      { turnId: "t2", children: [{ id: "d", displayTitle: "d", status: "READY", archived: false, forkedFrom: null }] },
    ],
  } as unknown as SessionHeadFragment;
  it("puts the fork's fields in its mark, keeping the other fork points", () => {
    const got = withForkChild(head, { ...summary("c"), displayTitle: "renamed", archived: true });
    expect(got.forkPoints[0].children[0]).toMatchObject({ id: "c", displayTitle: "renamed", status: "WORKING", archived: true });
    expect(got.forkPoints[1]).toBe(head.forkPoints[1]);
  });
  it("leaves the head as it is for a session that is none of its forks", () => {
    expect(withForkChild(head, summary("z"))).toBe(head);
  });
});

describe("listable", () => {
  const cases: [string, { visible: boolean; archived: boolean }, boolean, boolean][] = [
    ["a visible session", { visible: true, archived: false }, false, true],
    ["a hidden one (a review's throwaway fork)", { visible: false, archived: false }, true, false],
    ["an archived one, archived ones not listed", { visible: true, archived: true }, false, false],
    ["an archived one, archived ones listed", { visible: true, archived: true }, true, true],
  ];
  for (const [name, row, showArchived, want] of cases) {
    it(name, () => expect(listable(row, showArchived)).toBe(want));
  }
});

describe("insertRow", () => {
  const at = (id: string, createdAt: string) => s(id, { createdAt });
  const list = [at("a", "2026-12-07T03:00:00.000Z"), at("c", "2026-12-07T03:00:01.000Z"), at("e", "2026-12-07T03:00:01.000Z")];
  const cases: [string, SessionSummaryFragment, string[]][] = [
    ["the newest goes last", at("z", "2026-12-07T03:00:02.5Z"), ["a", "c", "e", "z"]],
    ["the oldest goes first", at("z", "2026-12-07T02:59:59Z"), ["z", "a", "c", "e"]],
    ["between, by creation time", at("b", "2026-12-07T03:00:00.5Z"), ["a", "b", "c", "e"]],
    ["at the same time, by id", at("d", "2026-12-07T03:00:01.000Z"), ["a", "c", "d", "e"]],
    ["to the nanosecond, not the millisecond", at("b", "2026-12-07T03:00:00.000000001Z"), ["a", "b", "c", "e"]],
    ["a time without a fraction", at("b", "2026-12-07T03:00:01Z"), ["a", "b", "c", "e"]],
  ];
  for (const [name, row, want] of cases) {
    it(name, () => {
      const got = insertRow(list, row);
      expect(got.map((x) => x.id)).toEqual(want);
      expect(list.map((x) => x.id)).toEqual(["a", "c", "e"]);
    });
  }
});

describe("withNewForkChild", () => {
  const mark = (id: string) => ({ id, displayTitle: id, status: "READY" as const, archived: false, forkedFrom: { forkedAtUnixMs: 1 } });
  const head = {
    id: "p",
    forkPoints: [
      { turnId: "t1", children: [mark("c")] },
      { turnId: null, children: [mark("w")] },
    ],
  } as unknown as SessionHeadFragment;
  const fork = (id: string, lastTurnId: string | null, parent = "p") =>
    s(id, { parent: { id: parent }, status: "WORKING", forkedFrom: { lastTurnId, forkedAtUnixMs: 5 } });
  it("adds a fork to its turn's marks, last", () => {
    const got = withNewForkChild(head, fork("d", "t1"));
    expect(got?.forkPoints[0].children.map((c) => c.id)).toEqual(["c", "d"]);
    expect(got?.forkPoints[0].children[1]).toMatchObject({ id: "d", status: "WORKING", forkedFrom: { forkedAtUnixMs: 5 } });
    expect(got?.forkPoints[1]).toBe(head.forkPoints[1]);
  });
  it("adds a whole-conversation fork to those marks", () => {
    expect(withNewForkChild(head, fork("x", null))?.forkPoints[1].children.map((c) => c.id)).toEqual(["w", "x"]);
  });
  it("takes the place of the fork marked already (an event again)", () => {
    expect(withNewForkChild(head, fork("c", "t1"))?.forkPoints[0].children).toHaveLength(1);
  });
  it("asks for a read when the turn has no mark yet", () => {
    expect(withNewForkChild(head, fork("d", "t9"))).toBeNull();
  });
  it("asks for a read for a fork of another session", () => {
    expect(withNewForkChild(head, fork("d", "t1", "q"))).toBeNull();
  });
});
