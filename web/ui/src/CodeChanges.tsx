// The shown session's code (issue 24): a region named Changes listing the
// files it changed (against its base in its own worktree, against HEAD in
// a shared folder), the diff on request, the output of the workspace's
// worktree setup, and for a worktree session `Apply to parent` with what
// it did (the files, or the conflicting paths).
import { Button } from "@radix-ui/themes";
import { useEffect, useState } from "react";
import { FileList } from "./FileList";
import type { SessionCodeFieldsFragment } from "./gql/graphql";
import { DiffPanel } from "./DiffPanel";
import { totals, totalsText, type ApplyOutcome } from "./state/code";

interface Props {
  code: SessionCodeFieldsFragment;
  hasParent: boolean;
  busy: boolean;
  // loadPatch reads the changes' patch (not part of the session's reads).
  loadPatch: () => Promise<{ patch: string; truncated: boolean } | null>;
  onApply: () => Promise<ApplyOutcome | null>;
}

export function CodeChanges({ code, hasParent, busy, loadPatch, onApply }: Props) {
  const files = code.changes.files;
  const [patch, setPatch] = useState<{ patch: string; truncated: boolean } | null>(null);
  const [open, setOpen] = useState(false);
  const [outcome, setOutcome] = useState<ApplyOutcome | null>(null);
  // The files the shown patch was read for: a newer list reads it again.
  const filesKey = files.map((f) => `${f.path}:${f.additions}:${f.deletions}`).join("\n");
  const worktree = code.mode === "WORKTREE";

  // Read while open, and again when the files change.
  useEffect(() => {
    if (!open) return;
    let live = true;
    void loadPatch().then((p) => {
      if (live && p) setPatch(p);
    });
    return () => {
      live = false;
    };
  }, [open, filesKey, loadPatch]);

  return (
    <section className="code-changes" aria-label="Changes" data-testid="changes" data-mode={code.mode}>
      <div className="code-changes-head">
        <strong>Changes</strong>
        <span className="muted small" data-testid="changes-where">
          {worktree ? (code.worktreePresent ? "own worktree" : "own worktree (archived)") : "shared folder"}
          {code.branch ? ` on ${code.branch}` : ""}
        </span>
        <span className="small" data-testid="changes-totals">
          {files.length === 0 ? "no changes" : totalsText(totals(files))}
          {code.changes.truncated ? " (cut)" : ""}
        </span>
        <span className="spacer" />
        {files.length > 0 && (
          <Button size="1" variant="soft" aria-expanded={open} data-testid="changes-diff" onClick={() => setOpen(!open)}>
            {open ? "Hide diff" : "Show diff"}
          </Button>
        )}
        {worktree && (
          <Button
            size="1"
            data-testid="apply-to-parent"
            disabled={busy || !hasParent}
            title={hasParent ? "Merge this worktree's changes into the parent's files, as uncommitted changes" : "This session has no parent"}
            onClick={() =>
              void onApply().then((o) => {
                if (o) setOutcome(o);
              })
            }
          >
            Apply to parent
          </Button>
        )}
      </div>
      {files.length > 0 && <FileList files={files} label="Changed files" testId="changes-files" />}
      {outcome && <Outcome o={outcome} />}
      {code.setupOutput != null && (
        <details className="setup-output" data-testid="setup-output">
          <summary className="small muted">The workspace's worktree setup ran here: its output</summary>
          <pre className="output">{code.setupOutput || "(no output)"}</pre>
        </details>
      )}
      {open && (patch ? <DiffPanel patch={patch.patch} truncated={patch.truncated} label="Changes diff" /> : <p className="muted small">Loading the diff…</p>)}
    </section>
  );
}

function Outcome({ o }: { o: ApplyOutcome }) {
  switch (o.kind) {
    case "applied":
      return (
        <div className="apply-outcome ok" role="status" data-testid="apply-outcome" data-kind="applied">
          Applied to the parent's files as uncommitted changes: {o.files.length} file{o.files.length === 1 ? "" : "s"}.
        </div>
      );
    case "nothing":
      return (
        <div className="apply-outcome" role="status" data-testid="apply-outcome" data-kind="nothing">
          Nothing to apply: the parent already has these changes, or there are none.
        </div>
      );
    case "conflicts":
      return (
        <div className="apply-outcome bad" role="alert" data-testid="apply-outcome" data-kind="conflicts">
          Not applied, nothing was written: {o.paths.length === 1 ? "1 file conflicts" : `${o.paths.length} files conflict`} with the parent's changes.
          <ul className="conflicts" aria-label="Conflicting files">
            {o.paths.map((p) => (
              <li key={p} data-conflict-path={p}>
                <code>{p}</code>
              </li>
            ))}
          </ul>
        </div>
      );
  }
}
