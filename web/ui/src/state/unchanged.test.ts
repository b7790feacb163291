import { describe, expect, it } from "vitest";
import { unchanged, unchangedBranches, unchangedRows } from "./unchanged";

describe("unchanged", () => {
  it.each([
    ["the same data", { a: 1, b: [2] }, { a: 1, b: [2] }, true],
    ["other data", { a: 1, b: [2] }, { a: 1, b: [3] }, false],
    ["null to data", null, { a: 1 }, false],
  ])("%s", (_, prev, next, kept) => {
    expect(unchanged<unknown>(prev, next) === prev).toBe(kept);
  });
});

describe("unchangedBranches", () => {
  const x = (id: string, ...bs: [string, string][]) => ({ id, state: "RUNNING", branches: bs.map(([name, state]) => ({ name, state })) });
  it("keeps the whole exploration when nothing changed", () => {
    const prev = x("x", ["a", "RUNNING"], ["b", "RUNNING"]);
    expect(unchangedBranches(prev, x("x", ["a", "RUNNING"], ["b", "RUNNING"]))).toBe(prev);
  });
  it("keeps the branches that did not change, takes those that did", () => {
    const prev = x("x", ["a", "RUNNING"], ["b", "RUNNING"]);
    const next = x("x", ["a", "RUNNING"], ["b", "IDLE"]);
    const got = unchangedBranches(prev, next);
    expect(got).not.toBe(prev);
    expect(got.branches[0]).toBe(prev.branches[0]);
    expect(got.branches[1]).toBe(next.branches[1]);
    expect(got.branches[1].state).toBe("IDLE");
  });
  it("takes another exploration whole", () => {
    const prev = x("x", ["a", "RUNNING"]);
    const next = x("y", ["a", "RUNNING"]);
    expect(unchangedBranches(prev, next)).toBe(next);
  });
});

describe("unchangedRows", () => {
  const rows = (...rs: [string, string][]) => rs.map(([id, status]) => ({ id, status }));
  it("keeps the list when no row changed", () => {
    const prev = rows(["a", "READY"], ["b", "READY"]);
    expect(unchangedRows(prev, rows(["a", "READY"], ["b", "READY"]))).toBe(prev);
  });
  it("keeps the rows that did not change in a list that did", () => {
    const prev = rows(["a", "READY"], ["b", "READY"]);
    const got = unchangedRows(prev, rows(["a", "READY"], ["b", "WORKING"], ["c", "READY"]));
    expect(got).not.toBe(prev);
    expect(got[0]).toBe(prev[0]);
    expect(got.map((r) => r.status)).toEqual(["READY", "WORKING", "READY"]);
  });
  it("sees a move", () => {
    const prev = rows(["a", "READY"], ["b", "READY"]);
    const got = unchangedRows(prev, rows(["b", "READY"], ["a", "READY"]));
    expect(got).not.toBe(prev);
    expect(got[0]).toBe(prev[1]);
  });
});
