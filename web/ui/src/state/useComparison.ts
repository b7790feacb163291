// The comparison of the shown session with another of its tree, while the
// person compares.
import { useCallback, useMemo, useRef, useState } from "react";
import { query } from "../client";
import { CompareSessionsDocument, type ComparisonFragment } from "../gql/graphql";
import { coalesce } from "./coalesce";

export function useComparison(currentWs: () => string | undefined, currentActive: () => string | undefined) {
  const [compareWith, setCompareWith] = useState<string | undefined>();
  const [comparison, setComparison] = useState<ComparisonFragment | null>(null);
  const ref = useRef(compareWith);
  ref.current = compareWith;
  const current = useCallback(() => ref.current, []);

  const refresh = useMemo(
    () =>
      coalesce(async () => {
        const ws = currentWs();
        const a = currentActive();
        const b = ref.current;
        if (!ws || !a || !b) return;
        const d = await query(CompareSessionsDocument, { ws, a, b });
        if (a !== currentActive() || b !== ref.current) return;
        setComparison(d.compareSessions);
      }),
    [currentWs, currentActive],
  );

  // set compares with b (none: undefined); the comparison is empty until
  // refreshed.
  const set = useCallback((b: string | undefined) => {
    ref.current = b;
    setCompareWith(b);
    setComparison(null);
  }, []);

  return { compareWith, comparison, current, set, refresh };
}
