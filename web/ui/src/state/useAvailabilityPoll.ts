// The shown workspace's unavailable sessions (owner instance down), read
// at once and every POLL_MS: no event says an instance went down or came
// back. A failed read keeps what was known (the next one tries again).
import { useEffect, useState } from "react";
import { query } from "../client";
import { UnavailableSessionsDocument } from "../gql/graphql";
import { POLL_MS, reasonsOf, sameReasons } from "./availability";

// null until the first read answers.
export function useAvailabilityPoll(ws: string | undefined): ReadonlyMap<string, string> | null {
  const [reasons, setReasons] = useState<ReadonlyMap<string, string> | null>(null);
  useEffect(() => {
    setReasons(null);
    if (!ws) return;
    let live = true;
    const read = async () => {
      try {
        const d = await query(UnavailableSessionsDocument, { ws });
        const next = reasonsOf(d.workspace?.unavailableSessions ?? []);
        if (live) setReasons((cur) => (cur && sameReasons(cur, next) ? cur : next));
      } catch {
        // Kept: the next poll tries again.
      }
    };
    void read();
    const t = window.setInterval(() => void read(), POLL_MS);
    return () => {
      live = false;
      window.clearInterval(t);
    };
  }, [ws]);
  return reasons;
}
