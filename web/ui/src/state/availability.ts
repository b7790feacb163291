// Which sessions' commands cannot run now (their owner instance is down,
// issue 25). No event says an instance went down or came back, so the
// workspace's unavailable sessions are polled (one cheap query).
export const POLL_MS = 5000;

interface Avail {
  available?: boolean;
  unavailableReason?: string | null;
}

// unavailable is why s's commands cannot run now, or null when they can.
export function unavailable(s: Avail | null | undefined): string | null {
  if (!s || s.available !== false) return null;
  return s.unavailableReason || "the instance that owns this session is down";
}

// reasonOf is unavailable for a listed row that withAvailability may
// have marked (its type does not say so).
export function reasonOf(s: object): string | null {
  return unavailable(s as Avail);
}

// reasonsOf maps the polled list to session id -> reason.
export function reasonsOf(list: readonly { agentSessionId: string; reason: string }[]): Map<string, string> {
  return new Map(list.map((u) => [u.agentSessionId, u.reason]));
}

// sameReasons: nothing changed (the state is kept, nothing re-renders).
export function sameReasons(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) if (b.get(k) !== v) return false;
  return true;
}

// withAvailability marks the listed sessions that are unavailable (the
// same array when none is).
export function withAvailability<T extends { id: string }>(list: T[], reasons: ReadonlyMap<string, string>): (T & Avail)[] {
  if (reasons.size === 0) return list;
  return list.map((s) => {
    const why = reasons.get(s.id);
    return why ? { ...s, available: false, unavailableReason: why } : s;
  });
}

// disabledTitle is the title of a command's button: why it is disabled
// when the session is unavailable, else its usual title.
export function disabledTitle(reason: string | null, usual?: string): string | undefined {
  return reason ? `Unavailable: ${reason}` : usual;
}
