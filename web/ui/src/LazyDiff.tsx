// The diff view, loaded on first use (its parser and grammars are a chunk
// of their own). If the chunk cannot be loaded (the server was updated
// meanwhile, the network dropped), the patch is shown as plain text rather
// than the page failing.
import { Component, lazy, Suspense, type ReactNode } from "react";

const DiffView = lazy(() => import("./DiffView"));

interface Props {
  patch: string;
  truncated: boolean;
  label: string;
}

class PlainOnError extends Component<{ patch: string; children: ReactNode }, { failed: boolean }> {
  state = { failed: false };
  static getDerivedStateFromError() {
    return { failed: true };
  }
  render() {
    if (!this.state.failed) return this.props.children;
    return (
      <div data-testid="diff-plain">
        <p className="muted small">The diff view could not be loaded; the patch as text:</p>
        <pre className="output">{this.props.patch}</pre>
      </div>
    );
  }
}

export function LazyDiff(p: Props) {
  return (
    <PlainOnError patch={p.patch}>
      <Suspense fallback={<p className="muted small">Loading the diff…</p>}>
        <DiffView {...p} />
      </Suspense>
    </PlainOnError>
  );
}
