// Which sessions' commands cannot run now (their owner instance is down,
// issue 25) and how often the list is read again to see them come back:
// no event says an instance went down or came back.
import type { SessionSummaryFragment } from "../gql/graphql";

type Avail = Pick<SessionSummaryFragment, "available" | "unavailableReason">;

// unavailable is why s's commands cannot run now, or null when they can.
export function unavailable(s: Avail | null | undefined): string | null {
  if (!s || s.available !== false) return null;
  return s.unavailableReason || "the instance that owns this session is down";
}

// The list is read again every UNAVAILABLE_POLL_MS while a listed session
// is unavailable (to see its owner back), else every WATCH_POLL_MS while
// the sessions have an owner (to see one go down); never for an empty list.
export const UNAVAILABLE_POLL_MS = 5000;
export const WATCH_POLL_MS = 15000;

export function pollInterval(list: readonly Avail[]): number | null {
  if (list.length === 0) return null;
  return list.some((s) => s.available === false) ? UNAVAILABLE_POLL_MS : WATCH_POLL_MS;
}

// disabledTitle is the title of a command's button: why it is disabled
// when the session is unavailable, else its usual title.
export function disabledTitle(reason: string | null, usual?: string): string | undefined {
  return reason ? `Unavailable: ${reason}` : usual;
}
