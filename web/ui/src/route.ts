// The URL hash names what is shown: #w=<workspaceId>&s=<sessionId>, plus
// &c=<otherSessionId> while comparing, or &x=<explorationId> while looking
// at an exploration of the session, so a reload or a shared link opens the
// same view.
export interface Route {
  w?: string;
  s?: string;
  c?: string;
  x?: string;
}

export function readRoute(): Route {
  const p = new URLSearchParams(location.hash.replace(/^#/, ""));
  return { w: p.get("w") || undefined, s: p.get("s") || undefined, c: p.get("c") || undefined, x: p.get("x") || undefined };
}

export function writeRoute(r: Route, push: boolean) {
  const p = new URLSearchParams();
  if (r.w) p.set("w", r.w);
  if (r.s) p.set("s", r.s);
  if (r.c) p.set("c", r.c);
  if (r.x) p.set("x", r.x);
  const hash = "#" + p.toString();
  if (hash === location.hash || (hash === "#" && location.hash === "")) return;
  if (push) history.pushState(null, "", hash);
  else history.replaceState(null, "", hash);
}
