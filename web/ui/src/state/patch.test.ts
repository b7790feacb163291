import { describe, expect, it } from "vitest";
import type { SessionHeadFragment, SessionSummaryFragment } from "../gql/graphql";
import { patchList, reapply, withForkChild } from "./patch";

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
