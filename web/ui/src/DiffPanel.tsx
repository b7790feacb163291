// The diff view, in the page's one script. Not a lazy chunk: the page
// loads app.js?v=<version> and a chunk imports "./app.js" without it, which
// the browser takes for another module (a second copy of the app and of
// React). If the diff view fails on a patch, the patch is shown as plain
// text rather than the page failing.
import { Component, type ReactNode } from "react";
import DiffView from "./DiffView";

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
        <p className="muted small">The diff could not be laid out; the patch as text:</p>
        <pre className="output">{this.props.patch}</pre>
      </div>
    );
  }
}

export function DiffPanel(p: Props) {
  return (
    <PlainOnError patch={p.patch}>
      <DiffView {...p} />
    </PlainOnError>
  );
}
