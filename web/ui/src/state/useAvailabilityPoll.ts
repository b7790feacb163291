// Reads the session list again on a timer while its sessions' availability
// can change unseen (availability.ts's pollInterval).
import { useEffect } from "react";
import type { SessionSummaryFragment } from "../gql/graphql";
import { pollInterval } from "./availability";

export function useAvailabilityPoll(sessions: readonly Pick<SessionSummaryFragment, "available" | "unavailableReason">[], refresh: () => void) {
  const every = pollInterval(sessions);
  useEffect(() => {
    if (every === null) return;
    const t = window.setInterval(refresh, every);
    return () => window.clearInterval(t);
  }, [every, refresh]);
}
