// The diff view, loaded on first use (its parser and grammars are a chunk
// of their own).
import { lazy, Suspense } from "react";

const DiffView = lazy(() => import("./DiffView"));

export function LazyDiff(p: { patch: string; truncated: boolean; label: string }) {
  return (
    <Suspense fallback={<p className="muted small">Loading the diff…</p>}>
      <DiffView {...p} />
    </Suspense>
  );
}
