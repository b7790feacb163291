import { describe, expect, it } from "vitest";
import { contextMeter, usageMeter } from "./meters";

describe("contextMeter", () => {
  it.each([
    [null, null],
    [{ totalTokens: 10, contextWindow: null }, null],
    [{ totalTokens: 10, contextWindow: 0 }, null],
    [{ totalTokens: 2500, contextWindow: 10000 }, { percent: 25, text: "2.5k of 10.0k tokens (25%)" }],
    [{ totalTokens: 20, contextWindow: 10 }, { percent: 100, text: "20 of 10 tokens (100%)" }],
  ])("%j", (u, want) => expect(contextMeter(u)).toEqual(want));
});

describe("usageMeter", () => {
  it("is null without limits", () => {
    expect(usageMeter(null)).toBeNull();
    expect(usageMeter({ primary: null, secondary: null, updatedAt: "2026-01-01T00:00:00Z" })).toBeNull();
  });
  it("shows the primary window and when it resets", () => {
    const m = usageMeter({ primary: { usedPercent: 42, windowMinutes: 300, resetsAt: "2026-01-01T02:00:00Z" }, secondary: null, updatedAt: "2026-01-01T00:00:00Z" });
    expect(m?.percent).toBe(42);
    expect(m?.text).toMatch(/^42% used, resets /);
  });
  it("falls back to the secondary window", () => {
    expect(usageMeter({ primary: null, secondary: { usedPercent: 7.4, windowMinutes: null, resetsAt: null }, updatedAt: "x" })).toEqual({ percent: 7.4, text: "7% used" });
  });
});
