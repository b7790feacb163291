// Codex's rate limits, read at start and again when reload is called (a
// turn reported usage: with eight branches running, many times a second,
// so reads coalesce and an answer that changed nothing renders nothing);
// null when Codex reports none.
import { useEffect, useMemo, useState } from "react";
import { query } from "../client";
import { RateLimitsDocument, type RateLimitsFieldsFragment } from "../gql/graphql";
import { coalesce } from "./coalesce";
import { unchanged } from "./unchanged";

export function useRateLimits() {
  const [limits, setLimits] = useState<RateLimitsFieldsFragment | null>(null);
  const reload = useMemo(() => {
    const read = coalesce(async () => {
      const r = await query(RateLimitsDocument, {});
      setLimits((prev) => unchanged(prev, r.rateLimits ?? null));
    });
    return () => void read().catch(() => {});
  }, []);
  useEffect(reload, [reload]);
  return { limits, reload };
}
