import { describe, expect, it } from "vitest";
import { coalesce } from "./coalesce";

describe("coalesce", () => {
  it("runs a burst of calls made while it runs once more, not once each", async () => {
    let runs = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const load = coalesce(async () => {
      runs++;
      if (runs === 1) await gate;
    });
    const first = load();
    const burst = [load(), load(), load()];
    release();
    await Promise.all([first, ...burst]);
    expect(runs).toBe(2);
  });

  it("runs again for a call after it finished", async () => {
    let runs = 0;
    const load = coalesce(async () => {
      runs++;
    });
    await load();
    await load();
    expect(runs).toBe(2);
  });

  it("runs again after a failure", async () => {
    let runs = 0;
    const load = coalesce(async () => {
      runs++;
      if (runs === 1) throw new Error("first");
    });
    await expect(load()).rejects.toThrow("first");
    await load();
    expect(runs).toBe(2);
  });
});
