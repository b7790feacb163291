// Codex's rate limits, read at start and again when reload is called (a
// turn reported usage); null when Codex reports none.
import { useCallback, useEffect, useState } from "react";
import { query } from "../client";
import { RateLimitsDocument, type RateLimitsFieldsFragment } from "../gql/graphql";

export function useRateLimits() {
  const [limits, setLimits] = useState<RateLimitsFieldsFragment | null>(null);
  const reload = useCallback(() => {
    query(RateLimitsDocument, {}).then(
      (r) => setLimits(r.rateLimits ?? null),
      () => {},
    );
  }, []);
  useEffect(reload, [reload]);
  return { limits, reload };
}
