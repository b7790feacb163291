// The API client: urql for queries and mutations over HTTP POST, and
// graphql-ws (the graphql-transport-ws protocol) for the activity
// subscription, both at the page's endpoint (body[data-endpoint]).
import { Client, fetchExchange, subscriptionExchange, type AnyVariables, type CombinedError, type TypedDocumentNode } from "@urql/core";
import { createClient as createWSClient, type Client as WSClient } from "graphql-ws";

export const endpoint = document.body.dataset.endpoint || "/query";

// The token lives in this origin's localStorage (per origin, so per port:
// a server on another port of this host cannot read it), never in a
// cookie, which a browser would send to every port of the host. It comes
// from the startup address's ?token=, which is then taken out of the
// address bar, or from the sign-in page; it goes out as the Authorization
// header and in the WebSocket's connection_init.
const tokenKey = "tuttid-token";

export function getToken(): string {
  try {
    return localStorage.getItem(tokenKey) ?? "";
  } catch {
    return "";
  }
}

export function setToken(token: string): void {
  localStorage.setItem(tokenKey, token);
}

// tokenFromAddress: the token in use came from this page's address (not
// from an earlier visit), so a refusal is about that address's token.
export let tokenFromAddress = false;

// takeTokenFromURL stores ?token= and removes it from the address (and so
// from the history and any later Referer).
function takeTokenFromURL(): void {
  const u = new URL(location.href);
  const tok = u.searchParams.get("token");
  if (tok === null) return;
  if (tok.trim()) {
    setToken(tok.trim());
    tokenFromAddress = true;
  }
  u.searchParams.delete("token");
  history.replaceState(history.state, "", u.pathname + u.search + u.hash);
}
takeTokenFromURL();

function authHeaders(): Record<string, string> {
  const tok = getToken();
  return tok ? { Authorization: `Bearer ${tok}` } : {};
}

function wsURL(): string {
  const u = new URL(endpoint, location.href);
  u.protocol = u.protocol === "https:" ? "wss:" : "ws:";
  return u.href;
}

// ApiError is a failed operation: code is tuttid's stable error code
// (extensions.code), or "network" when the server could not be reached.
export class ApiError extends Error {
  constructor(
    public code: string,
    message: string,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

export function toApiError(err: CombinedError | Error | unknown): ApiError {
  if (err instanceof ApiError) return err;
  const ce = err as CombinedError;
  if (ce && Array.isArray(ce.graphQLErrors) && ce.graphQLErrors.length > 0) {
    const first = ce.graphQLErrors[0];
    const code = (first.extensions?.code as string | undefined) ?? "error";
    return new ApiError(code, ce.graphQLErrors.map((e) => e.message).join("; "));
  }
  if (ce && ce.networkError) {
    const resp = ce.response as Response | undefined;
    if (resp && resp.status === 401) return new ApiError("unauthenticated", "sign in with the URL tuttid printed at startup");
    return new ApiError("network", `cannot reach the server: ${ce.networkError.message}`);
  }
  return new ApiError("error", err instanceof Error ? err.message : String(err));
}

export type ConnState = "connecting" | "live" | "reconnecting" | "closed";

type ConnListener = (s: ConnState, code?: number) => void;
const connListeners = new Set<ConnListener>();
export function onConnState(l: ConnListener): () => void {
  connListeners.add(l);
  return () => connListeners.delete(l);
}
function emitConn(s: ConnState, code?: number) {
  for (const l of connListeners) l(s, code);
}

// The WebSocket authenticates with connection_init's Authorization (read
// at each connection, so a token signed in later is used on reconnect).
export const wsClient: WSClient = createWSClient({
  url: wsURL(),
  lazy: true,
  connectionParams: () => authHeaders(),
  retryAttempts: Number.POSITIVE_INFINITY,
  shouldRetry: (ev) => !(ev && typeof ev === "object" && "code" in ev && (ev as CloseEvent).code === 4403),
  retryWait: async (retries) => {
    await new Promise((r) => setTimeout(r, Math.min(5000, 250 * 2 ** retries)));
  },
  on: {
    connecting: (isRetry) => emitConn(isRetry ? "reconnecting" : "connecting"),
    connected: () => emitConn("live"),
    closed: (ev) => emitConn("closed", (ev as CloseEvent | undefined)?.code),
  },
});

export const client = new Client({
  url: endpoint,
  requestPolicy: "network-only",
  preferGetMethod: false,
  // No cookie is needed or sent; the token goes in the header.
  fetchOptions: () => ({ credentials: "omit", headers: { Accept: "application/json", ...authHeaders() } }),
  exchanges: [
    fetchExchange,
    subscriptionExchange({
      forwardSubscription(request) {
        const input = { ...request, query: request.query || "" };
        return {
          subscribe(sink) {
            const unsubscribe = wsClient.subscribe(input, sink);
            return { unsubscribe };
          },
        };
      },
    }),
  ],
});

// query runs a typed query and resolves to its data; any error rejects
// with an ApiError.
export async function query<D, V extends AnyVariables>(doc: TypedDocumentNode<D, V>, vars: V): Promise<D> {
  const res = await client.query(doc, vars).toPromise();
  if (res.error) throw toApiError(res.error);
  if (!res.data) throw new ApiError("error", "the server answered no data");
  return res.data;
}

export async function mutate<D, V extends AnyVariables>(doc: TypedDocumentNode<D, V>, vars: V): Promise<D> {
  const res = await client.mutation(doc, vars).toPromise();
  if (res.error) throw toApiError(res.error);
  if (!res.data) throw new ApiError("error", "the server answered no data");
  return res.data;
}

// newRequestId is a fork's idempotency key.
export function newRequestId(): string {
  if (typeof crypto.randomUUID === "function") return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}
