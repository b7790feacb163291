import { describe, expect, it } from "vitest";
import type { ActivityFieldsFragment, ActivityKind } from "../gql/graphql";
import { idle, reduceActivity, reduceBatch, type ActivityInput, type Effect, type LiveState, type Shown } from "./activity";

const ev = (kind: ActivityKind, agentSessionId: string, more: Partial<ActivityFieldsFragment> = {}): ActivityFieldsFragment => ({
  kind,
  seq: 1,
  agentSessionId,
  messageId: null,
  delta: null,
  error: null,
  notice: null,
  noticeKind: null,
  turn: null,
  session: null,
  account: null,
  explorationId: null,
  checkRun: null,
  ...more,
});

// The page shows "a" (forked from "p", with a fork "c" made from its
// turn t1), with message m1 loaded.
const showingA: Shown = {
  activeId: "a",
  head: { parent: { id: "p", displayTitle: "p" }, forkPoints: [{ turnId: "t1", children: [{ id: "c", displayTitle: "c", status: "READY", archived: false, forkedFrom: null }] }] },
  messages: [{ id: "m1" }],
};
// A session as an event carries it.
const summary = (id: string) => ({ id, workspaceId: "w", title: id, displayTitle: id, status: "WORKING" as const, archived: false, createdAt: "", updatedAt: "", parent: null, forkedFrom: null });
const comparingAWithB: Shown = { ...showingA, compareWith: "b" };
// The page shows exploration x of "a", whose branches are sessions b1, b2.
const exploringA: Shown = { ...showingA, exploration: { id: "x", sessionIds: ["b1", "b2"] } };
const nothingShown: Shown = { head: null, messages: [] };

const live: LiveState = { conn: "live", streams: new Map(), retries: new Map(), warnings: [], warned: new Set() };

describe("reduceActivity: events", () => {
  const cases: [string, ActivityFieldsFragment, Shown, Effect[]][] = [
    ["subscribed reads what happened before", ev("SUBSCRIBED", ""), showingA, ["sessions", "active", "explorations"]],
    ["subscribed with nothing shown", ev("SUBSCRIBED", ""), nothingShown, ["sessions", "active"]],
    ["resync reloads all shown", ev("RESYNC_REQUIRED", ""), showingA, ["sessions", "active", "explorations"]],
    ["resync reloads the comparison too", ev("RESYNC_REQUIRED", ""), comparingAWithB, ["sessions", "active", "compare", "explorations"]],
    ["resync reloads the exploration shown", ev("RESYNC_REQUIRED", ""), exploringA, ["sessions", "active", "explorations", "exploration"]],
    ["the shown exploration updated", ev("EXPLORATION_UPDATED", "a", { explorationId: "x" }), exploringA, ["exploration"]],
    ["another exploration of the shown session, one shown", ev("EXPLORATION_UPDATED", "a", { explorationId: "y" }), exploringA, []],
    ["an exploration of the session shown, none open", ev("EXPLORATION_UPDATED", "a", { explorationId: "x" }), showingA, ["explorations"]],
    ["an exploration of another session", ev("EXPLORATION_UPDATED", "z", { explorationId: "y" }), exploringA, []],
    ["a branch's check", ev("CHECK_UPDATED", "b2", { checkRun: { id: "c", agentSessionId: "b2", state: "PASSED" } }), exploringA, ["exploration"]],
    ["a check of a session not in the exploration", ev("CHECK_UPDATED", "q"), exploringA, []],
    ["a check with no exploration shown", ev("CHECK_UPDATED", "b2"), showingA, []],
    ["a new session elsewhere: its row", ev("SESSION_CREATED", "x"), showingA, [{ listed: "x" }]],
    ["the shown session made: its row and itself", ev("SESSION_CREATED", "a"), showingA, [{ listed: "a" }, "active"]],
    ["a fork of the shown session: its marks take it", ev("SESSION_FORKED", "a", { session: summary("f") }), showingA, [{ forkMade: summary("f") }]],
    ["a fork of the shown session without the fork: read again", ev("SESSION_FORKED", "a"), showingA, ["active"]],
    ["a fork of another session: its row comes with its SESSION_CREATED", ev("SESSION_FORKED", "x", { session: summary("f") }), showingA, []],
    ["the shown session renamed", ev("SESSION_UPDATED", "a"), showingA, ["sessions", "active"]],
    ["the shown session deleted: show none", ev("SESSION_DELETED", "a"), showingA, ["sessions", "close"]],
    ["its parent renamed: the header names it", ev("SESSION_UPDATED", "p"), showingA, ["sessions", "active"]],
    ["a fork of it archived: the fork marks name it", ev("SESSION_UPDATED", "c"), showingA, ["sessions", "active"]],
    ["a fork of it updated, with the session: its mark takes it", ev("SESSION_UPDATED", "c", { session: summary("c") }), showingA, [{ patch: summary("c") }, { forkChild: summary("c") }]],
    ["a fork made elsewhere with nothing shown", ev("SESSION_FORKED", "x"), nothingShown, []],
    ["a session deleted elsewhere: the list", ev("SESSION_DELETED", "x"), showingA, ["sessions"]],
    ["a turn of the shown session starts", ev("TURN_STARTED", "a"), showingA, ["active"]],
    ["a turn elsewhere completes: its row in the list", ev("TURN_COMPLETED", "x"), showingA, [{ listed: "x" }]],
    ["a message elsewhere", ev("MESSAGE_ADDED", "x"), showingA, []],
    ["a message of the shown session", ev("MESSAGE_UPDATED", "a"), showingA, ["active"]],
    ["an approval while comparing", ev("APPROVAL_REQUESTED", "a"), comparingAWithB, ["active", "compare"]],
    ["the compared session's message", ev("MESSAGE_ADDED", "b"), comparingAWithB, ["compare"]],
    ["an approval resolved elsewhere", ev("APPROVAL_RESOLVED", "x"), comparingAWithB, []],
  ];
  for (const [name, event, shown, want] of cases) {
    it(name, () => {
      expect(reduceActivity(live, { type: "event", event, shown }).effects).toEqual(want);
    });
  }

  it("goes live on SUBSCRIBED, not before", () => {
    const connecting = reduceActivity(idle, { type: "subscribe" }).state;
    expect(connecting.conn).toBe("connecting");
    expect(reduceActivity(connecting, { type: "connection", state: "live" }).state.conn).toBe("connecting");
    expect(reduceActivity(connecting, { type: "event", event: ev("SUBSCRIBED", ""), shown: nothingShown }).state.conn).toBe("live");
  });

  it("leaves the state as it was for an event that changes nothing shown", () => {
    const step = reduceActivity(live, { type: "event", event: ev("MESSAGE_ADDED", "a"), shown: showingA });
    expect(step.state).toBe(live);
  });
});

describe("reduceActivity: streamed text", () => {
  const delta = (agentSessionId: string, messageId: string | null, d: string | null) => ev("MESSAGE_DELTA", agentSessionId, { messageId, delta: d });

  it("appends the shown session's deltas by message, without a reload for a loaded message", () => {
    let state = live;
    for (const d of ["Hel", "lo"]) {
      const step = reduceActivity(state, { type: "event", event: delta("a", "m1", d), shown: showingA });
      expect(step.effects).toEqual([]);
      state = step.state;
    }
    expect(state.streams.get("m1")).toBe("Hello");
    expect(live.streams.size).toBe(0);
  });

  it("reloads the shown session for a message it has not loaded", () => {
    const step = reduceActivity(live, { type: "event", event: delta("a", "m2", "x"), shown: showingA });
    expect(step.effects).toEqual(["active"]);
    expect(step.state.streams.get("m2")).toBe("x");
  });

  const ignored: [string, ActivityFieldsFragment][] = [
    ["another session's", delta("x", "m1", "x")],
    ["without a message", delta("a", null, "x")],
    ["empty", delta("a", "m1", "")],
  ];
  for (const [name, event] of ignored) {
    it(`ignores ${name} deltas`, () => {
      const step = reduceActivity(live, { type: "event", event, shown: showingA });
      expect(step).toEqual({ state: live, effects: [] });
    });
  }

  it("empties the streams when another session is shown", () => {
    const streaming = reduceActivity(live, { type: "event", event: delta("a", "m1", "x"), shown: showingA }).state;
    expect(reduceActivity(streaming, { type: "show" }).state.streams.size).toBe(0);
    expect(reduceActivity(live, { type: "show" }).state).toBe(live);
  });
});

describe("reduceActivity: the connection", () => {
  const cases: [string, LiveState["conn"], { state: "connecting" | "live" | "reconnecting" | "closed"; code?: number }, LiveState["conn"], Effect[]][] = [
    ["connecting", "idle", { state: "connecting" }, "connecting", []],
    ["a retry", "live", { state: "reconnecting" }, "reconnecting", []],
    ["closed: it retries", "live", { state: "closed", code: 1006 }, "reconnecting", []],
    ["refused token", "live", { state: "closed", code: 4403 }, "reconnecting", ["signIn"]],
    ["connected", "reconnecting", { state: "live" }, "reconnecting", []],
  ];
  for (const [name, from, input, to, effects] of cases) {
    it(name, () => {
      const step = reduceActivity({ conn: from, streams: new Map(), retries: new Map(), warnings: [], warned: new Set() }, { type: "connection", ...input });
      expect(step.state.conn).toBe(to);
      expect(step.effects).toEqual(effects);
    });
  }

  it("is idle without a workspace", () => {
    expect(reduceActivity(live, { type: "unsubscribe" }).state.conn).toBe("idle");
  });
});

describe("reduceActivity: a session as the event carries it", () => {
  const session = (id: string, displayTitle: string) => ({
    id,
    workspaceId: "w",
    title: displayTitle,
    displayTitle,
    status: "READY" as const,
    archived: false,
    createdAt: "",
    updatedAt: "",
    parent: null,
    forkedFrom: null,
  });
  const cases: [string, ActivityFieldsFragment, Effect[]][] = [
    ["another session renamed: patched, no reload", ev("SESSION_UPDATED", "x", { session: session("x", "new") }), [{ patch: session("x", "new") }]],
    ["the shown session renamed: patched, and its header reloaded", ev("SESSION_UPDATED", "a", { session: session("a", "new") }), [{ patch: session("a", "new") }, "active"]],
    ["its parent renamed: patched, and the header reloaded", ev("SESSION_UPDATED", "p", { session: session("p", "new") }), [{ patch: session("p", "new") }, "active"]],
  ];
  for (const [name, event, want] of cases) {
    it(name, () => {
      expect(reduceActivity(live, { type: "event", event, shown: showingA }).effects).toEqual(want);
    });
  }
});

describe("reduceBatch", () => {
  const renamed = (id: string, displayTitle: string) =>
    ev("SESSION_UPDATED", id, {
      session: { id, workspaceId: "w", title: displayTitle, displayTitle, status: "READY", archived: false, createdAt: "", updatedAt: "", parent: null, forkedFrom: null },
    });
  const event = (e: ActivityFieldsFragment): ActivityInput => ({ type: "event", event: e, shown: showingA });

  it("asks for each reload once however many events ask for it", () => {
    const inputs = Array.from({ length: 1000 }, (_, i) => event(ev(i % 2 ? "TURN_COMPLETED" : "SESSION_DELETED", `x${i}`)));
    expect(reduceBatch(live, inputs).effects).toEqual(["sessions"]);
  });

  it("reads a session's row once, and none when the whole list is read", () => {
    const turns = [event(ev("TURN_COMPLETED", "x")), event(ev("TURN_COMPLETED", "x")), event(ev("TURN_STARTED", "y"))];
    expect(reduceBatch(live, turns).effects).toEqual([{ listed: "x" }]);
    expect(reduceBatch(live, [...turns, event(ev("SESSION_DELETED", "z"))]).effects).toEqual(["sessions"]);
  });

  it("keeps the last patch of a session, where its first was", () => {
    const step = reduceBatch(live, [event(renamed("x", "one")), event(renamed("y", "y")), event(renamed("x", "two")), event(ev("SESSION_DELETED", "z"))]);
    expect(step.effects.map((e) => (typeof e === "string" ? e : "patch" in e ? `${e.patch.id}=${e.patch.displayTitle}` : "account"))).toEqual(["x=two", "y=y", "sessions"]);
  });

  it("runs the inputs in order: the state after the last", () => {
    const delta = (d: string) => event(ev("MESSAGE_DELTA", "a", { messageId: "m1", delta: d }));
    const step = reduceBatch(live, [delta("Hel"), delta("lo"), { type: "connection", state: "reconnecting" }]);
    expect(step.state.streams.get("m1")).toBe("Hello");
    expect(step.state.conn).toBe("reconnecting");
    expect(step.effects).toEqual([]);
  });

  it("leaves the state as it was when nothing changes", () => {
    expect(reduceBatch(live, [event(ev("MESSAGE_ADDED", "x"))]).state).toBe(live);
  });

  it("hands every ACCOUNT_UPDATED to the sign-in state, in order", () => {
    const a = { signedIn: true, requiresOpenaiAuth: true, authMode: "apiKey", email: null, planType: null };
    const step = reduceBatch(live, [event(ev("ACCOUNT_UPDATED", "", { account: { ...a, signedIn: false } })), event(ev("ACCOUNT_UPDATED", "", { account: a }))]);
    expect(step.effects).toEqual([
      { account: { ...a, signedIn: false }, error: null },
      { account: a, error: null },
    ]);
  });
});

describe("reduceActivity: ACCOUNT_UPDATED", () => {
  it("carries the account and a failed login's reason, and reloads nothing", () => {
    const a = { signedIn: false, requiresOpenaiAuth: true, authMode: null, email: null, planType: null };
    const step = reduceActivity(live, { type: "event", event: ev("ACCOUNT_UPDATED", "", { account: a, error: "denied" }), shown: showingA });
    expect(step.effects).toEqual([{ account: a, error: "denied" }]);
    expect(step.state).toBe(live);
  });
});

describe("reduceActivity: TURN_RETRYING", () => {
  const retrying = ev("TURN_RETRYING", "a", { turn: { id: "t9" }, error: "Reconnecting... 2/5" });
  it("keeps the shown session's retry message by turn, and reloads nothing", () => {
    const step = reduceActivity(live, { type: "event", event: retrying, shown: showingA });
    expect(step.state.retries.get("t9")).toBe("Reconnecting... 2/5");
    expect(step.effects).toEqual([]);
  });
  it("ignores another session's retries", () => {
    expect(reduceActivity(live, { type: "event", event: ev("TURN_RETRYING", "x", { turn: { id: "t9" }, error: "e" }), shown: showingA }).state).toBe(live);
  });
  it("drops the message when the turn ends, and when another session is shown", () => {
    const s = reduceActivity(live, { type: "event", event: retrying, shown: showingA }).state;
    const done = reduceActivity(s, { type: "event", event: ev("TURN_COMPLETED", "a", { turn: { id: "t9" } }), shown: showingA });
    expect(done.state.retries.size).toBe(0);
    expect(done.effects).toEqual(["active", { listed: "a" }]);
    expect(reduceActivity(s, { type: "show" }).state.retries.size).toBe(0);
  });
});

describe("reduceActivity: TOKEN_USAGE_UPDATED", () => {
  it("reloads the shown session (its Context meter) and the rate limits", () => {
    expect(reduceActivity(live, { type: "event", event: ev("TOKEN_USAGE_UPDATED", "a"), shown: showingA }).effects).toEqual(["active", "usage"]);
    expect(reduceActivity(live, { type: "event", event: ev("TOKEN_USAGE_UPDATED", "x"), shown: showingA }).effects).toEqual(["usage"]);
  });
});

describe("reduceActivity: PROVIDER_WARNING", () => {
  const config = ev("PROVIDER_WARNING", "", { notice: "unknown key foo", noticeKind: "configWarning" });
  it("keeps each warning once, even when Codex repeats it, and reloads nothing", () => {
    const once = reduceActivity(live, { type: "event", event: config, shown: showingA });
    expect(once.effects).toEqual([]);
    expect(once.state.warnings.map((w) => [w.kind, w.text, w.sessionId])).toEqual([["configWarning", "unknown key foo", null]]);
    const twice = reduceActivity(once.state, { type: "event", event: config, shown: showingA });
    expect(twice.state).toBe(once.state);
  });
  it("keeps a session's warning with its session", () => {
    const s = reduceActivity(live, { type: "event", event: ev("PROVIDER_WARNING", "x", { notice: "slow", noticeKind: "warning" }), shown: showingA }).state;
    expect(s.warnings.map((w) => w.sessionId)).toEqual(["x"]);
  });
  it("does not show a dismissed warning again", () => {
    const s = reduceActivity(live, { type: "event", event: config, shown: showingA }).state;
    const dismissed = reduceActivity(s, { type: "dismissWarning", key: s.warnings[0].key }).state;
    expect(dismissed.warnings).toEqual([]);
    expect(reduceActivity(dismissed, { type: "event", event: config, shown: showingA }).state.warnings).toEqual([]);
  });
});
