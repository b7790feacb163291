// A read that changed nothing must not re-render what shows it: the page
// reads the exploration, its list and the rate limits again on events
// while eight branches run, and most reads answer what the page has.
// These keep the objects the page holds where the data is the same, so
// React's memo skips them.

function equal(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

// unchanged: prev when next holds the same data, else next.
export function unchanged<T>(prev: T, next: T): T {
  return equal(prev, next) ? prev : next;
}

// unchangedBranches: next, with each branch that is the same as before (by
// name) the object held before; prev itself when nothing changed.
export function unchangedBranches<B extends { name: string }, X extends { id: string; branches: readonly B[] }>(prev: X | null, next: X): X {
  if (!prev || prev.id !== next.id) return next;
  if (equal(prev, next)) return prev;
  const before = new Map(prev.branches.map((b) => [b.name, b]));
  return {
    ...next,
    branches: next.branches.map((b) => {
      const old = before.get(b.name);
      return old && equal(old, b) ? old : b;
    }),
  };
}

// unchangedRows: next, with each row that is the same as before (by id)
// the object held before; prev itself when no row changed, was added,
// removed or moved.
export function unchangedRows<R extends { id: string }>(prev: readonly R[], next: R[]): R[] {
  const before = new Map(prev.map((r) => [r.id, r]));
  let same = prev.length === next.length;
  const out = next.map((r, i) => {
    const old = before.get(r.id);
    const kept = old && equal(old, r) ? old : r;
    if (kept !== prev[i]) same = false;
    return kept;
  });
  return same ? (prev as R[]) : out;
}
