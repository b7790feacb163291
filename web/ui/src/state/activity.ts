// The activity stream as a pure reducer: what each input (the workspace's
// subscription starting or ending, the WebSocket's state, an event) does to
// what the stream shows (the connection, the text streamed per message) and
// which loads it asks for. useActivity runs it; the tests run it alone.
import type { ConnState } from "../client";
import type { ActivityFieldsFragment, CodexAccountFieldsFragment, SessionHeadFragment, SessionSummaryFragment } from "../gql/graphql";

export type Conn = ConnState | "idle";

export interface LiveState {
  conn: Conn;
  // The text streamed so far (MESSAGE_DELTA) by message id, for the shown
  // session only: another session shown starts empty.
  streams: ReadonlyMap<string, string>;
  // Why Codex retries a running turn of the shown session (TURN_RETRYING's
  // message), by turn id, until the turn ends.
  retries: ReadonlyMap<string, string>;
  // Codex's warnings (PROVIDER_WARNING) not dismissed yet, oldest first:
  // about its configuration (sessionId null) or one session's thread.
  warnings: readonly Warning[];
  // Every warning key ever received: the same warning is shown once, even
  // when Codex repeats it or after it was dismissed.
  warned: ReadonlySet<string>;
}

export interface Warning {
  key: string;
  kind: string;
  text: string;
  sessionId: string | null;
}

export const idle: LiveState = { conn: "idle", streams: new Map(), retries: new Map(), warnings: [], warned: new Set() };

// Shown is what the page shows when an event arrives: which events concern
// it.
export interface Shown {
  activeId?: string;
  compareWith?: string;
  // The exploration shown (issue 32) and its branches' sessions.
  exploration?: { id: string; sessionIds: readonly string[] };
  head: Pick<SessionHeadFragment, "parent" | "forkPoints"> | null;
  messages: readonly { id: string }[];
}

// Effect is what an input asks of the page: reload the session list, the
// shown session or the comparison; show no session (it was deleted); ask
// for the token (the server refused it); or put a session as the event
// carried it in the list in place of the listed one (SESSION_UPDATED with
// its session: a rename or a status needs no reload of every session; the
// page reloads the list when it cannot, e.g. the session is not listed).
// ACCOUNT_UPDATED hands Codex's account (and why a login failed) to the
// sign-in state.
// A Listed asks for one session's row again (a turn of it ended: the files
// it changed), not every session's: with eight branches running, each
// list read counted every worktree's changes.
// "usage" asks for the rate limits again (a turn reported its usage).
// "exploration" reads the shown exploration again; "explorations" the
// shown session's list of them (issue 32).
export type Effect = "sessions" | "active" | "compare" | "close" | "signIn" | "usage" | "exploration" | "explorations" | Patch | Listed | ForkChild | ForkMade | AccountUpdate;

export interface Patch {
  patch: SessionSummaryFragment;
}

export interface Listed {
  listed: string;
}

// ForkChild puts a fork's new fields (title, status, archived) in the
// shown session's fork marks.
export interface ForkChild {
  forkChild: SessionSummaryFragment;
}

// ForkMade puts a new fork in the shown session's fork marks.
export interface ForkMade {
  forkMade: SessionSummaryFragment;
}

export interface AccountUpdate {
  account: CodexAccountFieldsFragment | null;
  error: string | null;
}

export type ActivityInput =
  | { type: "subscribe" }
  | { type: "unsubscribe" }
  | { type: "connection"; state: ConnState; code?: number }
  | { type: "show" }
  | { type: "dismissWarning"; key: string }
  | { type: "event"; event: ActivityFieldsFragment; shown: Shown };

export interface Step {
  state: LiveState;
  effects: Effect[];
}

// The WebSocket close code for a token the server no longer accepts.
const closeForbidden = 4403;

// reduceActivity returns the state after input and the effects it asks
// for; a state it leaves alone is returned as given (React then skips the
// render).
export function reduceActivity(state: LiveState, input: ActivityInput): Step {
  switch (input.type) {
    case "subscribe":
      return { state: withConn(state, "connecting"), effects: [] };
    case "unsubscribe":
      return { state: withConn(state, "idle"), effects: [] };
    case "show":
      return { state: state.streams.size === 0 && state.retries.size === 0 ? state : { ...state, streams: new Map(), retries: new Map() }, effects: [] };
    case "dismissWarning":
      return { state: { ...state, warnings: state.warnings.filter((w) => w.key !== input.key) }, effects: [] };
    case "connection": {
      const effects: Effect[] = input.state === "closed" && input.code === closeForbidden ? ["signIn"] : [];
      // "live" comes with the SUBSCRIBED event, once the subscription is
      // registered on the server; a bare connection is not yet that.
      if (input.state === "live") return { state, effects };
      return { state: withConn(state, input.state === "closed" ? "reconnecting" : input.state), effects };
    }
    case "event":
      return onEvent(state, input.event, input.shown);
  }
}

function onEvent(state: LiveState, ev: ActivityFieldsFragment, shown: Shown): Step {
  const active = shown.activeId;
  const mine = ev.agentSessionId === active;
  switch (ev.kind) {
    case "SUBSCRIBED":
      // Registered: every later change arrives as an event; what happened
      // before (or while reconnecting) is read now.
      return { state: withConn(state, "live"), effects: ["sessions", "active", ...explorationReads(shown)] };
    case "RESYNC_REQUIRED": {
      const effects: Effect[] = shown.compareWith ? ["sessions", "active", "compare"] : ["sessions", "active"];
      return { state, effects: [...effects, ...explorationReads(shown)] };
    }
    case "EXPLORATION_UPDATED": {
      // On the explored session: its list (not while an exploration is
      // shown in its place: read when it closes), and the exploration if
      // shown.
      const effects: Effect[] = [];
      if (mine && !shown.exploration) effects.push("explorations");
      if (ev.explorationId && ev.explorationId === shown.exploration?.id) effects.push("exploration");
      return { state, effects };
    }
    case "CHECK_UPDATED":
      // On a branch's session: its check result in the exploration shown.
      return { state, effects: shown.exploration?.sessionIds.includes(ev.agentSessionId) ? ["exploration"] : [] };
    case "ACCOUNT_UPDATED":
      // Of no session (agentSessionId is empty): only the sign-in state.
      return { state, effects: [{ account: ev.account ?? null, error: ev.error ?? null }] };
    case "PROVIDER_WARNING": {
      const text = ev.notice ?? "";
      const kind = ev.noticeKind ?? "warning";
      const sessionId = ev.agentSessionId || null;
      const key = `${kind}\u0000${sessionId ?? ""}\u0000${text}`;
      if (!text || state.warned.has(key)) return { state, effects: [] };
      const warned = new Set(state.warned).add(key);
      return { state: { ...state, warned, warnings: [...state.warnings, { key, kind, text, sessionId }] }, effects: [] };
    }
    case "TURN_RETRYING": {
      if (!mine || !ev.turn) return { state, effects: [] };
      const retries = new Map(state.retries).set(ev.turn.id, ev.error || "Codex is retrying the model request");
      return { state: { ...state, retries }, effects: [] };
    }
    case "MESSAGE_DELTA": {
      if (!mine || !ev.messageId || !ev.delta) return { state, effects: [] };
      // By item: its view shows the stream where it belongs (an agent
      // message's text, a command's output, a plan); reasoning stays
      // collapsed and is read when done.
      const streams = new Map(state.streams).set(ev.messageId, (state.streams.get(ev.messageId) ?? "") + ev.delta);
      const known = shown.messages.some((m) => m.id === ev.messageId);
      return { state: { ...state, streams }, effects: known ? [] : ["active"] };
    }
    case "SESSION_CREATED": {
      // Its row, read and put where the list has it (eight branches made
      // at once would each read the whole list again).
      const row: Effect = { listed: ev.agentSessionId };
      return { state, effects: mine ? [row, "active"] : [row] };
    }
    case "SESSION_FORKED": {
      // On the parent, with the fork (whose row comes with its
      // SESSION_CREATED): the parent's fork marks, if shown, take it.
      if (!mine) return { state, effects: [] };
      return { state, effects: [ev.session ? { forkMade: ev.session } : "active"] };
    }
    case "SESSION_UPDATED":
    case "SESSION_DELETED": {
      const list: Effect = ev.kind === "SESSION_UPDATED" && ev.session ? { patch: ev.session } : "sessions";
      if (mine) return { state, effects: [list, ev.kind === "SESSION_DELETED" ? "close" : "active"] };
      // A fork of the shown session renamed, archived or working: its mark
      // takes the event's fields (eight branches changing status would
      // each read the whole shown session again).
      if (ev.kind === "SESSION_UPDATED" && ev.session && forkOfShown(shown, ev.agentSessionId)) return { state, effects: [list, { forkChild: ev.session }] };
      return { state, effects: related(shown, ev.agentSessionId) ? [list, "active"] : [list] };
    }
    default: {
      if (ev.kind === "TURN_COMPLETED" && ev.turn && state.retries.has(ev.turn.id)) {
        const retries = new Map(state.retries);
        retries.delete(ev.turn.id);
        state = { ...state, retries };
      }
      const effects: Effect[] = [];
      if (mine) effects.push("active");
      if (shown.compareWith && (mine || ev.agentSessionId === shown.compareWith)) effects.push("compare");
      // A turn's end: the files it changed (its status comes patched, in
      // SESSION_UPDATED).
      if (ev.kind === "TURN_COMPLETED" && ev.agentSessionId) effects.push({ listed: ev.agentSessionId });
      if (ev.kind === "TOKEN_USAGE_UPDATED") effects.push("usage");
      return { state, effects };
    }
  }
}

// explorationReads: what a reload of everything shown reads of
// explorations.
function explorationReads(shown: Shown): Effect[] {
  const out: Effect[] = [];
  if (shown.activeId) out.push("explorations");
  if (shown.exploration) out.push("exploration");
  return out;
}

// forkOfShown: id is one of the shown session's forks (its fork marks).
function forkOfShown(shown: Shown, id: string): boolean {
  return !!shown.head?.forkPoints.some((fp) => fp.children.some((c) => c.id === id));
}

// related: id is the shown session's parent or one of its forks, which
// its header or fork marks name.
function related(shown: Shown, id: string): boolean {
  const h = shown.head;
  if (!h) return false;
  return h.parent?.id === id || h.forkPoints.some((fp) => fp.children.some((c) => c.id === id));
}

function withConn(state: LiveState, conn: Conn): LiveState {
  return state.conn === conn ? state : { ...state, conn };
}

// reduceBatch runs inputs in order (the events that arrived within one
// animation frame) and returns the state after the last and their effects
// once each: a reload asked for by many events is asked for once, and of
// many patches of one session the last is kept (where the first was).
export function reduceBatch(state: LiveState, inputs: readonly ActivityInput[]): Step {
  const effects: Effect[] = [];
  const seen = new Set<string>();
  const patchAt = new Map<string, number>();
  for (const input of inputs) {
    const step = reduceActivity(state, input);
    state = step.state;
    for (const e of step.effects) {
      if (typeof e === "string") {
        if (!seen.has(e)) effects.push(e);
        seen.add(e);
        continue;
      }
      if ("listed" in e) {
        // Once a session; none when the whole list is read again.
        const key = `listed\u0000${e.listed}`;
        if (!seen.has(key)) effects.push(e);
        seen.add(key);
        continue;
      }
      if (!("patch" in e)) {
        effects.push(e);
        continue;
      }
      const at = patchAt.get(e.patch.id);
      if (at === undefined) {
        patchAt.set(e.patch.id, effects.length);
        effects.push(e);
      } else effects[at] = e;
    }
  }
  return { state, effects: seen.has("sessions") ? effects.filter((e) => typeof e === "string" || !("listed" in e)) : effects };
}
