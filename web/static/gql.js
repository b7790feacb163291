// GraphQL over HTTP POST, and subscriptions over a WebSocket speaking
// graphql-transport-ws (the protocol of the graphql-ws library, PROTOCOL.md).

const endpoint = document.body.dataset.endpoint || "/query";

// GraphQLError carries the server's errors; code is the first one's
// extensions.code (tuttid's stable error code).
export class GraphQLError extends Error {
  constructor(errors) {
    const list = Array.isArray(errors) && errors.length ? errors : [{ message: "unknown error" }];
    super(list.map((e) => e.message).join("; "));
    this.name = "GraphQLError";
    this.errors = list;
    this.code = list[0].extensions?.code || "error";
  }
}

function failure(code, message) {
  return new GraphQLError([{ message, extensions: { code } }]);
}

// gql posts one operation and resolves to its data; any error rejects.
export async function gql(query, variables = {}) {
  let resp;
  try {
    resp = await fetch(endpoint, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify({ query, variables }),
      credentials: "same-origin",
    });
  } catch (e) {
    throw failure("network", `cannot reach the server: ${e.message}`);
  }
  let body;
  try {
    body = await resp.json();
  } catch {
    throw failure(`http_${resp.status}`, `the server answered HTTP ${resp.status}`);
  }
  if (body.errors?.length) throw new GraphQLError(body.errors);
  if (body.error) throw failure(body.error.code, body.error.message); // a non-GraphQL refusal (origin check)
  if (!resp.ok) throw failure(`http_${resp.status}`, `the server answered HTTP ${resp.status}`);
  return body.data;
}

function wsURL() {
  const u = new URL(endpoint, location.href);
  u.protocol = u.protocol === "https:" ? "wss:" : "ws:";
  return u.href;
}

// subscribe runs one subscription on its own connection. Handlers:
// onStart() once the server acknowledged the connection and the
// subscription was sent; onNext(data); onError(GraphQLError) for errors the
// server sends; onClose() when the connection or the subscription ends
// (not after close()). Returns { close() }.
export function subscribe(query, variables, { onStart, onNext, onError, onClose }) {
  const id = "1";
  let ended = false;
  const ws = new WebSocket(wsURL(), "graphql-transport-ws");
  const send = (msg) => {
    if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(msg));
  };
  const end = () => {
    if (ended) return;
    ended = true;
    try { ws.close(1000); } catch { /* already closed */ }
    onClose?.();
  };
  ws.onopen = () => send({ type: "connection_init", payload: {} });
  ws.onmessage = (ev) => {
    let msg;
    try {
      msg = JSON.parse(ev.data);
    } catch {
      ws.close(4400, "invalid message");
      return;
    }
    switch (msg.type) {
      case "connection_ack":
        send({ id, type: "subscribe", payload: { query, variables } });
        onStart?.();
        break;
      case "ping":
        send({ type: "pong", payload: msg.payload });
        break;
      case "pong":
        break;
      case "next":
        if (msg.id !== id) break;
        if (msg.payload?.errors?.length) onError?.(new GraphQLError(msg.payload.errors));
        if (msg.payload?.data) onNext?.(msg.payload.data);
        break;
      case "error":
        if (msg.id === id) onError?.(new GraphQLError(msg.payload));
        break;
      case "complete":
        if (msg.id === id) end();
        break;
    }
  };
  ws.onerror = () => { /* onclose follows */ };
  ws.onclose = () => end();
  return {
    close() {
      if (ended) return;
      ended = true;
      send({ id, type: "complete" });
      try { ws.close(1000); } catch { /* already closed */ }
    },
  };
}
