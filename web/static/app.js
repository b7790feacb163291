// tuttid's web GUI: workspaces, sessions, the active conversation, fork.
// State lives in `state`; the URL hash (#w=<workspace>&s=<session>) names
// what is shown, so a reload or a link opens the same view.
import { gql, subscribe, GraphQLError } from "./gql.js";

const Q = {
  workspaces: `query { workspaces { id name rootPath } }`,
  sessions: `query($id: ID!) { workspace(id: $id) { id name
    sessions(first: 500) { edges { node { id displayTitle status parent { id } } } } } }`,
  session: `query($ws: ID!, $id: ID!) { session(workspaceId: $ws, id: $id) {
    id displayTitle status
    parent { id displayTitle }
    forkedFrom { lastTurnId }
    turns { id status error messages { id turnId role kind text status } }
    pendingApprovals { id turnId kind command cwd reason availableDecisions } } }`,
  createWorkspace: `mutation($input: CreateWorkspaceInput!) { createWorkspace(input: $input) { id name rootPath } }`,
  startSession: `mutation($input: StartSessionInput!) { startSession(input: $input) { id } }`,
  sendMessage: `mutation($input: SendMessageInput!) { sendMessage(input: $input) { id status } }`,
  interruptTurn: `mutation($input: InterruptTurnInput!) { interruptTurn(input: $input) { id status } }`,
  forkSession: `mutation($input: ForkSessionInput!) { forkSession(input: $input) {
    session { id displayTitle } fork { targetAgentSessionId lastTurnId } } }`,
  respondToApproval: `mutation($input: RespondToApprovalInput!) { respondToApproval(input: $input) { id decision } }`,
  activity: `subscription($ws: ID!) { activity(workspaceId: $ws) {
    kind seq agentSessionId delta messageId deltaKind } }`,
};

const state = {
  workspaces: [],
  wsId: null,
  sessions: [], // flattened tree: { id, displayTitle, status, parentId, depth }
  activeId: null,
  active: null, // the session query's result
  streams: new Map(), // `${sessionId}/${messageId}` → text streamed so far
  sub: null,
  subGen: 0,
  retry: 0,
  pending: 0, // mutations in flight that block the conversation actions
};

const $ = (id) => document.getElementById(id);

// el builds an element: attributes (data-* and aria-* included), then
// children (strings become text nodes; null/false are skipped).
function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "dataset") Object.assign(e.dataset, v);
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (v === true) e.setAttribute(k, "");
    else e.setAttribute(k, String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    e.append(typeof c === "string" ? document.createTextNode(c) : c);
  }
  return e;
}

// ---- errors ----

function showError(err) {
  const code = err instanceof GraphQLError ? err.code : "error";
  const text = err instanceof Error ? err.message : String(err);
  $("error-text").textContent = `${text} (${code})`;
  $("error-banner").dataset.code = code;
  $("error-banner").hidden = false;
  console.error(err);
}

function clearError() {
  $("error-banner").hidden = true;
  $("error-text").textContent = "";
  delete $("error-banner").dataset.code;
}

// guarded runs an action that may fail and shows its error.
async function guarded(fn) {
  try {
    return await fn();
  } catch (e) {
    showError(e);
    return undefined;
  }
}

document.addEventListener("securitypolicyviolation", (e) => {
  showError(new GraphQLError([{ message: `blocked by the content security policy: ${e.violatedDirective} ${e.blockedURI}`,
    extensions: { code: "csp_violation" } }]));
});

// ---- routing ----

function readRoute() {
  const p = new URLSearchParams(location.hash.slice(1));
  return { w: p.get("w"), s: p.get("s") };
}

function writeRoute(push) {
  const p = new URLSearchParams();
  if (state.wsId) p.set("w", state.wsId);
  if (state.activeId) p.set("s", state.activeId);
  const hash = "#" + p.toString();
  if (hash === location.hash) return;
  if (push) history.pushState(null, "", hash);
  else history.replaceState(null, "", hash);
}

async function applyRoute() {
  const { w, s } = readRoute();
  if (w && w !== state.wsId) await selectWorkspace(w, { route: false });
  if (s !== state.activeId) await activate(s, { route: false });
}

// ---- refresh coalescing ----

// coalesce wraps an async loader so that calls during a run cause exactly
// one more run afterwards.
function coalesce(fn) {
  let running = null;
  let again = false;
  const run = async () => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      try {
        do {
          again = false;
          await fn();
        } while (again);
      } finally {
        running = null;
      }
    })();
    return running;
  };
  return run;
}

// ---- workspaces ----

async function loadWorkspaces() {
  const data = await gql(Q.workspaces);
  state.workspaces = data.workspaces;
  renderWorkspaces();
}

function renderWorkspaces() {
  const sel = $("workspace-select");
  sel.replaceChildren(
    ...(state.workspaces.length ? [] : [el("option", { value: "" }, "No workspaces")]),
    ...state.workspaces.map((w) => el("option", { value: w.id, title: w.rootPath, selected: w.id === state.wsId }, w.name)),
  );
  sel.disabled = !state.workspaces.length;
  if (state.wsId) sel.value = state.wsId;
  $("new-session").disabled = !state.wsId;
  if (!state.workspaces.length) $("ws-create").open = true;
}

async function selectWorkspace(id, { route = true } = {}) {
  if (id === state.wsId) return;
  state.wsId = id;
  state.sessions = [];
  state.activeId = null;
  state.active = null;
  renderWorkspaces();
  renderSessions();
  renderActive();
  if (route) writeRoute(true);
  resubscribe();
  await guarded(refreshSessions);
}

// ---- sessions ----

// flatten orders sessions as a tree: each fork right under its parent,
// depth-first, siblings oldest first.
function flatten(nodes) {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const kids = new Map();
  const roots = [];
  for (const n of nodes) {
    const pid = n.parent?.id;
    if (pid && byId.has(pid)) {
      if (!kids.has(pid)) kids.set(pid, []);
      kids.get(pid).push(n);
    } else {
      roots.push(n);
    }
  }
  const out = [];
  const walk = (n, depth) => {
    out.push({ id: n.id, displayTitle: n.displayTitle, status: n.status, parentId: n.parent?.id ?? null, depth });
    for (const k of kids.get(n.id) ?? []) walk(k, depth + 1);
  };
  for (const r of roots) walk(r, 0);
  return out;
}

const refreshSessions = coalesce(async () => {
  const wsId = state.wsId;
  if (!wsId) return;
  const data = await gql(Q.sessions, { id: wsId });
  if (wsId !== state.wsId) return;
  if (!data.workspace) throw new GraphQLError([{ message: `workspace ${wsId} not found`, extensions: { code: "agent.workspace_not_found" } }]);
  state.sessions = flatten(data.workspace.sessions.edges.map((e) => e.node));
  renderSessions();
});

function renderSessions() {
  const list = $("session-list");
  list.replaceChildren(
    ...state.sessions.map((s) => {
      const btn = el("button", {
        type: "button",
        class: "session-item" + (s.id === state.activeId ? " active" : ""),
        "data-testid": "session-item",
        dataset: { sessionId: s.id, status: s.status, depth: String(s.depth) },
        "aria-current": s.id === state.activeId ? "true" : null,
        title: s.displayTitle,
        onclick: () => activate(s.id),
      },
      s.depth ? el("span", { class: "fork-mark", "aria-label": "fork of the session above" }, "↳") : null,
      el("span", { class: "session-name" }, s.displayTitle),
      el("span", { class: `status status-${s.status.toLowerCase()}` }, s.status.toLowerCase()));
      btn.style.setProperty("--depth", String(s.depth));
      return el("li", {}, btn);
    }),
  );
  $("no-sessions").hidden = !state.wsId || state.sessions.length > 0;
}

async function activate(id, { route = true } = {}) {
  state.activeId = id || null;
  state.active = null;
  if (route) writeRoute(true);
  renderSessions();
  renderActive();
  if (id) await guarded(refreshActive);
}

const refreshActive = coalesce(async () => {
  const id = state.activeId;
  const wsId = state.wsId;
  if (!id || !wsId) return;
  const data = await gql(Q.session, { ws: wsId, id });
  if (id !== state.activeId) return;
  if (!data.session) {
    state.activeId = null;
    state.active = null;
    writeRoute(false);
    renderActive();
    throw new GraphQLError([{ message: `session ${id} not found`, extensions: { code: "agent.session_not_found" } }]);
  }
  state.active = data.session;
  for (const t of data.session.turns) {
    for (const m of t.messages) if (m.status !== "in_progress") state.streams.delete(`${id}/${m.id}`);
  }
  // A session's status in the list follows the freshest read.
  const row = state.sessions.find((s) => s.id === id);
  if (row && (row.status !== data.session.status || row.displayTitle !== data.session.displayTitle)) {
    row.status = data.session.status;
    row.displayTitle = data.session.displayTitle;
    renderSessions();
  }
  renderActive();
});

// ---- the active session ----

const CHAT_ROLES = new Set(["user", "assistant"]);

function messageText(m) {
  const streamed = state.streams.get(`${state.activeId}/${m.id}`);
  if (m.status === "in_progress" && streamed && streamed.length > m.text.length) return streamed;
  return m.text;
}

function renderMessage(m) {
  const text = messageText(m);
  const attrs = {
    "data-testid": "message",
    dataset: { messageId: m.id, role: m.role, status: m.status },
  };
  if (CHAT_ROLES.has(m.role)) {
    return el("li", { ...attrs, class: `msg msg-${m.role}` },
      el("div", { class: "msg-role" }, m.role === "user" ? "You" : "Agent"),
      el("div", { class: "msg-text", "data-testid": "message-text" }, text || (m.status === "in_progress" ? "…" : "")));
  }
  return el("li", { ...attrs, class: "msg msg-other" },
    el("details", {},
      el("summary", {}, `${m.role}${m.kind && m.kind !== m.role ? ` · ${m.kind}` : ""}`, m.status === "in_progress" ? " …" : ""),
      el("pre", { class: "msg-text", "data-testid": "message-text" }, text || "(no text)")));
}

const TURN_STATUS = { IN_PROGRESS: "running", COMPLETED: "completed", INTERRUPTED: "interrupted", FAILED: "failed" };

function renderTurn(t, i, busy) {
  const running = t.status === "IN_PROGRESS";
  const canFork = t.status === "COMPLETED" && !busy;
  const why = running ? "This turn is still running" : t.status !== "COMPLETED" ? `Only a completed turn can be forked from (this one ${TURN_STATUS[t.status] ?? t.status})` : "Fork the conversation through this turn into a new session";
  return el("li", { class: `turn turn-${t.status.toLowerCase()}`, "data-testid": "turn", dataset: { turnId: t.id, status: t.status } },
    el("div", { class: "turn-head" },
      el("span", { class: "turn-label" }, `Turn ${i + 1}`),
      el("span", { class: `status status-${t.status.toLowerCase()}` }, TURN_STATUS[t.status] ?? t.status),
      el("span", { class: "turn-actions", role: "toolbar", "aria-label": `Turn ${i + 1}` },
        el("button", {
          type: "button", class: "small", "data-testid": "fork-from-here", dataset: { turnId: t.id },
          disabled: !canFork, title: why, onclick: () => fork(t.id),
        }, "Fork from here"))),
    el("ol", { class: "messages" }, t.messages.map(renderMessage)),
    t.error ? el("p", { class: "turn-error", "data-testid": "turn-error" }, t.error) : null);
}

function renderActive() {
  const s = state.active;
  const section = $("session");
  const placeholder = $("placeholder");
  if (!state.wsId) {
    placeholder.textContent = state.workspaces.length ? "Choose a workspace." : "Create a workspace to start.";
  } else if (!state.activeId) {
    placeholder.textContent = "Select a session, or start a new one.";
  } else {
    placeholder.textContent = "Loading session…";
  }
  placeholder.hidden = !!s;
  section.hidden = !s;
  if (!s) {
    delete section.dataset.sessionId;
    return;
  }
  section.dataset.sessionId = s.id;
  section.dataset.status = s.status;
  document.title = `${s.displayTitle} · tuttid`;
  $("session-title").textContent = s.displayTitle;
  const status = $("session-status");
  status.textContent = s.status.toLowerCase();
  status.className = `status status-${s.status.toLowerCase()}`;

  const pi = $("parent-indicator");
  if (s.parent) {
    pi.hidden = false;
    pi.dataset.parentId = s.parent.id;
    pi.title = s.forkedFrom?.lastTurnId ? `Forked through turn ${s.forkedFrom.lastTurnId}; open the parent session` : "Open the parent session";
    pi.replaceChildren("↰ Forked from ", el("strong", {}, s.parent.displayTitle));
  } else {
    pi.hidden = true;
    delete pi.dataset.parentId;
    pi.replaceChildren();
  }

  const busy = state.pending > 0;
  const running = s.turns.find((t) => t.status === "IN_PROGRESS");
  $("fork-conversation").disabled = busy;
  const intr = $("interrupt");
  intr.hidden = !running;
  intr.disabled = !running || busy;
  intr.dataset.turnId = running?.id ?? "";
  $("send").disabled = s.status === "WORKING" || !!running || busy;

  const conv = $("conversation");
  const nearBottom = conv.scrollHeight - conv.scrollTop - conv.clientHeight < 80;
  conv.replaceChildren(...s.turns.map((t, i) => renderTurn(t, i, busy)));
  if (!s.turns.length) conv.append(el("li", { class: "empty muted" }, "No messages yet. Say something below."));
  for (const a of s.pendingApprovals ?? []) conv.append(renderApproval(a, busy));
  if (nearBottom) conv.scrollTop = conv.scrollHeight;
}

// ---- approvals: the agent waits for the person ----

const APPROVAL_KIND = {
  COMMAND: "Run a command", FILE_CHANGE: "Change files", PERMISSIONS: "Grant permissions",
  USER_INPUT: "Answer questions", MCP_ELICITATION: "Fill a form for an MCP server",
};
const DECISION_LABEL = {
  ACCEPT: "Allow", ACCEPT_FOR_SESSION: "Allow for this session", ACCEPT_ALWAYS: "Always allow",
  DECLINE: "Decline", CANCEL: "Cancel turn",
};

function renderApproval(a, busy) {
  return el("li", { class: "approval", "data-testid": "approval", dataset: { approvalId: a.id, kind: a.kind } },
    el("div", { class: "approval-head" }, `The agent asks: ${APPROVAL_KIND[a.kind] ?? a.kind}`),
    a.command ? el("pre", { class: "approval-command" }, a.command) : null,
    a.reason ? el("p", { class: "approval-reason" }, a.reason) : null,
    a.cwd ? el("p", { class: "muted" }, `in ${a.cwd}`) : null,
    el("div", { class: "approval-actions", role: "toolbar" },
      a.availableDecisions.map((d) => el("button", {
        type: "button", class: d.startsWith("ACCEPT") ? "small primary" : "small",
        "data-testid": "approval-decision", dataset: { decision: d }, disabled: busy,
        onclick: () => respondToApproval(a.id, d),
      }, DECISION_LABEL[d] ?? d))));
}

function respondToApproval(approvalId, decision) {
  const s = state.active;
  if (!s) return;
  return blocking(async () => {
    clearError();
    await gql(Q.respondToApproval, { input: { workspaceId: state.wsId, agentSessionId: s.id, approvalId, decision } });
    await refreshActive();
  });
}

// appendDelta shows streamed assistant text as it arrives.
function appendDelta(sessionId, messageId, delta) {
  if (!messageId || !delta) return;
  const key = `${sessionId}/${messageId}`;
  const text = (state.streams.get(key) ?? "") + delta;
  state.streams.set(key, text);
  if (sessionId !== state.activeId) return;
  const item = document.querySelector(`#conversation [data-testid="message"][data-message-id="${CSS.escape(messageId)}"]`);
  const target = item?.querySelector('[data-testid="message-text"]');
  if (target) {
    const conv = $("conversation");
    const nearBottom = conv.scrollHeight - conv.scrollTop - conv.clientHeight < 80;
    target.textContent = text;
    if (nearBottom) conv.scrollTop = conv.scrollHeight;
  } else {
    guarded(refreshActive); // the message is not shown yet
  }
}

// ---- actions ----

// requestId is a fresh idempotency key per request (crypto.randomUUID where
// the page is a secure context, else the same from getRandomValues).
function requestId() {
  if (crypto.randomUUID) return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

// blocking runs a mutation with the conversation's actions disabled.
async function blocking(fn) {
  state.pending++;
  renderActive();
  try {
    return await guarded(fn);
  } finally {
    state.pending--;
    renderActive();
  }
}

// fork forks the active session: the whole conversation without a turn,
// else through that completed turn. The server names the child.
function fork(lastTurnId) {
  const s = state.active;
  if (!s) return;
  return blocking(async () => {
    clearError();
    const input = { workspaceId: state.wsId, agentSessionId: s.id, requestId: requestId() };
    if (lastTurnId) input.lastTurnId = lastTurnId;
    const data = await gql(Q.forkSession, { input });
    await refreshSessions();
    await activate(data.forkSession.session.id);
  });
}

async function sendMessage(ev) {
  ev.preventDefault();
  const s = state.active;
  const input = $("composer-input");
  const text = input.value;
  if (!s || !text.trim() || $("send").disabled) return;
  await blocking(async () => {
    clearError();
    await gql(Q.sendMessage, { input: { workspaceId: state.wsId, agentSessionId: s.id, text } });
    if (input.value === text) input.value = "";
    await refreshActive();
  });
}

function interrupt() {
  const s = state.active;
  const turnId = $("interrupt").dataset.turnId;
  if (!s || !turnId) return;
  return blocking(async () => {
    clearError();
    await gql(Q.interruptTurn, { input: { workspaceId: state.wsId, agentSessionId: s.id, turnId } });
    await refreshActive();
  });
}

async function newSession() {
  if (!state.wsId) return;
  await guarded(async () => {
    clearError();
    const data = await gql(Q.startSession, { input: { workspaceId: state.wsId } });
    await refreshSessions();
    await activate(data.startSession.id);
    $("composer-input").focus();
  });
}

async function createWorkspace(ev) {
  ev.preventDefault();
  const form = ev.target;
  const name = form.elements.name.value.trim();
  const rootPath = form.elements.rootPath.value.trim();
  await guarded(async () => {
    clearError();
    const data = await gql(Q.createWorkspace, { input: { name, rootPath } });
    form.reset();
    $("ws-create").open = false;
    await loadWorkspaces();
    await selectWorkspace(data.createWorkspace.id);
  });
}

// ---- live activity ----

function setConn(s, label) {
  const c = $("conn");
  c.dataset.state = s;
  c.textContent = label;
}

function resubscribe() {
  state.sub?.close();
  state.sub = null;
  const gen = ++state.subGen;
  const wsId = state.wsId;
  if (!wsId) {
    setConn("idle", "offline");
    return;
  }
  setConn("connecting", "connecting…");
  state.sub = subscribe(Q.activity, { ws: wsId }, {
    onNext(data) {
      if (gen === state.subGen) onActivity(data.activity);
    },
    onError(err) {
      if (gen !== state.subGen) return;
      if (err.code !== "activity.resync_required") showError(err);
    },
    onClose() {
      if (gen !== state.subGen) return;
      // Reconnect with a growing delay; the reload on start catches up.
      setConn("reconnecting", "reconnecting…");
      const delay = Math.min(5000, 250 * 2 ** state.retry++);
      setTimeout(() => {
        if (gen === state.subGen) resubscribe();
      }, delay);
    },
  });
}

function reload() {
  guarded(refreshSessions);
  if (state.activeId) guarded(refreshActive);
}

function onActivity(ev) {
  switch (ev.kind) {
    case "SUBSCRIBED":
      // Registered: every later change arrives as an event. Whatever
      // happened before it is read now.
      state.retry = 0;
      setConn("live", "live");
      reload();
      return;
    case "RESYNC_REQUIRED":
      resubscribe(); // reloads once the new subscription starts
      return;
    case "MESSAGE_DELTA":
      // Command output and reasoning stream too; the GUI shows them when
      // their item completes.
      if (!ev.deltaKind || ev.deltaKind === "agentMessage") appendDelta(ev.agentSessionId, ev.messageId, ev.delta);
      return;
    case "SESSION_CREATED":
    case "SESSION_FORKED":
    case "SESSION_UPDATED":
    case "SESSION_DELETED":
      guarded(refreshSessions);
      if (ev.agentSessionId === state.activeId) {
        if (ev.kind === "SESSION_DELETED") activate(null);
        else guarded(refreshActive);
      }
      return;
    default: // TURN_*, MESSAGE_ADDED, MESSAGE_UPDATED
      if (ev.agentSessionId === state.activeId) guarded(refreshActive);
  }
}

// ---- start ----

function wire() {
  $("workspace-select").addEventListener("change", (e) => e.target.value && selectWorkspace(e.target.value));
  $("ws-form").addEventListener("submit", createWorkspace);
  $("new-session").addEventListener("click", newSession);
  $("fork-conversation").addEventListener("click", () => fork(null));
  $("interrupt").addEventListener("click", interrupt);
  $("parent-indicator").addEventListener("click", (e) => {
    const id = e.currentTarget.dataset.parentId;
    if (id) activate(id);
  });
  $("composer").addEventListener("submit", sendMessage);
  $("composer-input").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) $("composer").requestSubmit();
  });
  $("error-close").addEventListener("click", clearError);
  window.addEventListener("popstate", () => guarded(applyRoute));
}

async function start() {
  wire();
  await guarded(loadWorkspaces);
  const { w, s } = readRoute();
  const known = state.workspaces.some((x) => x.id === w);
  const first = known ? w : state.workspaces[0]?.id;
  if (first) {
    await selectWorkspace(first, { route: false });
    if (known && s) await activate(s, { route: false });
    writeRoute(false);
  } else {
    renderActive();
  }
  document.body.dataset.ready = "true";
}

start();
