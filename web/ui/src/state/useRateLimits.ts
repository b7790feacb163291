// Codex's rate limits, read at start and again when reload is called (a
// turn reported usage: with eight branches running, many times a second,
// so reads coalesce, at most one every readGapMs, and an answer that
// changed nothing renders nothing); null when Codex reports none.
import { startTransition, useEffect, useMemo, useState } from "react";
import { query } from "../client";
import { RateLimitsDocument, type RateLimitsFieldsFragment } from "../gql/graphql";
import { coalesce } from "./coalesce";
import { unchanged } from "./unchanged";

// readGapMs: the top bar's meter need not follow each token.
const readGapMs = 2000;

export function useRateLimits() {
  const [limits, setLimits] = useState<RateLimitsFieldsFragment | null>(null);
  const reload = useMemo(() => {
    const read = coalesce(async () => {
      const began = Date.now();
      const r = await query(RateLimitsDocument, {});
      startTransition(() => setLimits((prev) => unchanged(prev, r.rateLimits ?? null)));
      // Asked again meanwhile: the next read waits out the gap.
      const rest = readGapMs - (Date.now() - began);
      if (rest > 0) await new Promise((done) => setTimeout(done, rest));
    });
    return () => void read().catch(() => {});
  }, []);
  useEffect(reload, [reload]);
  return { limits, reload };
}
