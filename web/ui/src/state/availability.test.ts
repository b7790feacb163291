import { describe, expect, it } from "vitest";
import { buildForest, type TreeSession } from "../treeRows";
import { disabledTitle, reasonOf, reasonsOf, sameReasons, unavailable, withAvailability } from "./availability";

describe("availability", () => {
  it("gives the reason of an unavailable session, null otherwise", () => {
    expect(unavailable({ available: true, unavailableReason: null })).toBeNull();
    expect(unavailable(null)).toBeNull();
    expect(unavailable({})).toBeNull();
    expect(unavailable({ available: false, unavailableReason: "instance a is down: last heartbeat 20s ago" })).toBe(
      "instance a is down: last heartbeat 20s ago",
    );
    expect(unavailable({ available: false, unavailableReason: null })).toBe("the instance that owns this session is down");
  });
  it("marks the listed sessions the poll names, keeping the list when none", () => {
    const list = [{ id: "s1" }, { id: "s2" }];
    expect(withAvailability(list, new Map())).toBe(list);
    const marked = withAvailability(list, reasonsOf([{ agentSessionId: "s2", reason: "instance a is down" }]));
    expect(marked[0]).toBe(list[0]);
    expect(unavailable(marked[0])).toBeNull();
    expect(unavailable(marked[1])).toBe("instance a is down");
  });
  it("compares polls by content", () => {
    const a = reasonsOf([{ agentSessionId: "s1", reason: "instance a is down: last heartbeat 20s ago" }]);
    expect(sameReasons(a, reasonsOf([{ agentSessionId: "s1", reason: "instance a is down: last heartbeat 20s ago" }]))).toBe(true);
    expect(sameReasons(a, reasonsOf([{ agentSessionId: "s1", reason: "instance a is down: last heartbeat 25s ago" }]))).toBe(false);
    expect(sameReasons(a, new Map())).toBe(false);
  });
  it("titles a disabled command with the reason", () => {
    expect(disabledTitle("instance a is down", "Fork")).toBe("Unavailable: instance a is down");
    expect(disabledTitle(null, "Fork")).toBe("Fork");
    expect(disabledTitle(null)).toBeUndefined();
  });
});

describe("the tree and availability", () => {
  it("builds a session's branch anew when its availability changes, and only then", () => {
    const row = (id: string) =>
      ({ id, workspaceId: "w", title: id, displayTitle: id, status: "READY", archived: false, createdAt: "", updatedAt: "", parent: null, forkedFrom: null, code: null }) as unknown as TreeSession;
    const list = [row("s1"), row("s2")];
    const first = buildForest(list);
    const same = buildForest([...list], first);
    expect(same[0]).toBe(first[0]);
    const down = withAvailability(list, reasonsOf([{ agentSessionId: "s2", reason: "instance a is down" }]));
    const next = buildForest(down, first);
    expect(next[0]).toBe(first[0]);
    expect(next[1]).not.toBe(first[1]);
    expect(reasonOf(next[1].s)).toBe("instance a is down");
  });
});
