import { describe, expect, it } from "vitest";
import { batcher, type Schedule } from "./batch";

// A schedule the test runs by hand.
function manual() {
  const queued: (() => void)[] = [];
  const schedule: Schedule = (fn) => {
    queued.push(fn);
    return () => queued.splice(queued.indexOf(fn), 1);
  };
  const tick = () => queued.splice(0).forEach((fn) => fn());
  return { schedule, tick, queued };
}

describe("batcher", () => {
  it("handles what arrived before the frame together, in order, once", () => {
    const m = manual();
    const runs: number[][] = [];
    const b = batcher<number>((xs) => runs.push(xs), m.schedule);
    for (let i = 0; i < 1000; i++) b.push(i);
    expect(m.queued.length).toBe(1);
    expect(runs).toEqual([]);
    m.tick();
    expect(runs.length).toBe(1);
    expect(runs[0].length).toBe(1000);
    expect(runs[0][999]).toBe(999);
    b.push(1000);
    m.tick();
    expect(runs).toEqual([runs[0], [1000]]);
  });

  it("flushes at once when asked, and not again at the frame", () => {
    const m = manual();
    const runs: string[][] = [];
    const b = batcher<string>((xs) => runs.push(xs), m.schedule);
    b.push("a");
    b.flush();
    expect(runs).toEqual([["a"]]);
    expect(m.queued.length).toBe(0);
    b.flush();
    expect(runs.length).toBe(1);
  });

  it("drops what is pending", () => {
    const m = manual();
    const runs: string[][] = [];
    const b = batcher<string>((xs) => runs.push(xs), m.schedule);
    b.push("a");
    b.drop();
    m.tick();
    b.flush();
    expect(runs).toEqual([]);
  });
});
