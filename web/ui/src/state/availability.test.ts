import { describe, expect, it } from "vitest";
import { disabledTitle, pollInterval, unavailable, UNAVAILABLE_POLL_MS, WATCH_POLL_MS } from "./availability";

describe("availability", () => {
  it("gives the reason of an unavailable session, null otherwise", () => {
    expect(unavailable({ available: true, unavailableReason: null })).toBeNull();
    expect(unavailable(null)).toBeNull();
    expect(unavailable({ available: false, unavailableReason: "instance a is down: last heartbeat 20s ago" })).toBe(
      "instance a is down: last heartbeat 20s ago",
    );
    expect(unavailable({ available: false, unavailableReason: null })).toBe("the instance that owns this session is down");
  });
  it("polls fast while a session is unavailable, slowly otherwise, never for no session", () => {
    const up = { available: true, unavailableReason: null };
    const down = { available: false, unavailableReason: "instance a is down" };
    expect(pollInterval([])).toBeNull();
    expect(pollInterval([up, up])).toBe(WATCH_POLL_MS);
    expect(pollInterval([up, down])).toBe(UNAVAILABLE_POLL_MS);
  });
  it("titles a disabled command with the reason", () => {
    expect(disabledTitle("instance a is down", "Fork")).toBe("Unavailable: instance a is down");
    expect(disabledTitle(null, "Fork")).toBe("Fork");
    expect(disabledTitle(null)).toBeUndefined();
  });
});
