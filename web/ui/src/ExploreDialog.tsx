// The Explore dialog, which `Explore from here` opens (issue 32): 2 to 8
// branches from a completed turn, each with a name, its Model, Reasoning
// effort and Permissions (the fork dialog's fields, starting from the
// explored session's) and an optional prompt of its own; the shared
// Prompt; the Check command (the workspace's to start with). Start sends
// exploreSession; a refusal is shown here with its code and everything
// typed stays. Non-modal role="dialog", as the fork dialog. By keyboard:
// the dialog takes focus (its Prompt); Escape closes it; when it closes,
// focus goes back to what opened it, or, when that is gone (Start shows
// the exploration instead of the conversation), to onFocusLost's choice.
import { Button, Card, Flex, Heading, Text } from "@radix-ui/themes";
import { useEffect, useRef, useState } from "react";
import type { ApiError } from "./client";
import type { CodexModelFieldsFragment, ExploreSessionInput } from "./gql/graphql";
import { SettingsFields } from "./SettingsFields";
import {
  addBranch,
  exploreInput,
  hasProblems,
  maxBranches,
  minBranches,
  problemsOf,
  removeBranch,
  requestFor,
  startDraft,
  updateBranch,
  type Sent,
  type Target,
} from "./state/explore";
import type { Settings } from "./state/settings";

interface Props {
  parent: Settings;
  models: readonly CodexModelFieldsFragment[];
  busy: boolean;
  // The turn explored from (its words).
  from: { turnId: string; text: string };
  target: Target;
  // The workspace's check bound, said beside the command.
  checkTimeoutSeconds: number;
  // requestId makes an idempotency key (newRequestId).
  requestId: () => string;
  // onStart resolves to null when the exploration was made, else why not.
  onStart: (input: ExploreSessionInput) => Promise<ApiError | null>;
  onClose: () => void;
  // Where focus goes when the dialog closes and what opened it is gone.
  onFocusLost?: () => void;
}

export function ExploreDialog({ parent, models, busy, from, target, checkTimeoutSeconds, requestId, onStart, onClose, onFocusLost }: Props) {
  const [draft, setDraft] = useState(() => startDraft(parent, target.workspaceCheck));
  const [error, setError] = useState<ApiError | null>(null);
  const sent = useRef<Sent | null>(null);
  const addRef = useRef<HTMLButtonElement>(null);
  // The new branch whose Name takes focus when it is shown (the last one
  // Add branch can add: the button is then disabled, and a disabled
  // button loses focus).
  const focusName = useRef<number | null>(null);
  // What had focus when the dialog opened (the first render runs before
  // the Prompt takes it).
  const [opener] = useState(() => {
    const a = document.activeElement;
    return a instanceof HTMLElement && a !== document.body ? a : null;
  });
  const lost = useRef(onFocusLost);
  lost.current = onFocusLost;
  useEffect(
    () => () => {
      // Closed. Focus that left the dialog for another control stays
      // there; focus that went with the dialog goes back.
      const a = document.activeElement;
      if (a && a !== document.body && a.isConnected) return;
      if (opener?.isConnected) opener.focus();
      else lost.current?.();
    },
    [opener],
  );
  const problems = problemsOf(draft);
  const n = draft.branches.length;

  const start = async () => {
    const input = exploreInput(draft, parent, target);
    sent.current = requestFor(sent.current, input, requestId);
    setError(null);
    setError(await onStart({ ...input, requestId: sent.current.requestId }));
  };

  return (
    <div
      className="fork-dialog explore-dialog"
      role="dialog"
      aria-labelledby="explore-dialog-title"
      data-testid="explore-dialog"
      data-turn-id={from.turnId}
      onKeyDown={(e) => {
        if (e.key === "Escape") onClose();
      }}
    >
      <Card size="2">
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (!hasProblems(problems)) void start();
          }}
        >
          <Flex direction="column" gap="3">
            <Heading as="h2" size="3" id="explore-dialog-title">
              Explore
            </Heading>
            <Text size="2" className="muted" data-testid="explore-dialog-from">
              From “{from.text || "this turn"}”: each branch is a fork with its own worktree, its first turn started at once; the check runs in each after every turn.
            </Text>
            <label className="explore-field">
              Prompt
              <textarea
                aria-label="Prompt"
                data-testid="explore-prompt"
                rows={3}
                maxLength={100000}
                placeholder="What every branch without its own prompt is asked"
                value={draft.prompt}
                autoFocus
                onChange={(e) => setDraft({ ...draft, prompt: e.target.value })}
              />
            </label>
            <div className="explore-branches">
              {draft.branches.map((b, i) => {
                const nameProblem = problems.names.get(b.key);
                return (
                  <fieldset key={b.key} className="explore-branch" data-testid="explore-branch" data-index={i}>
                    <legend>Branch {i + 1}</legend>
                    <label className="explore-field">
                      Name
                      <input
                        aria-label="Name"
                        data-testid={`explore-${i}-name`}
                        value={b.name}
                        maxLength={32}
                        autoComplete="off"
                        aria-invalid={nameProblem ? true : undefined}
                        aria-describedby={nameProblem ? `explore-${i}-name-problem` : undefined}
                        ref={(el) => {
                          if (el && focusName.current === b.key) {
                            focusName.current = null;
                            el.focus();
                          }
                        }}
                        onChange={(e) => setDraft(updateBranch(draft, b.key, { name: e.target.value }))}
                      />
                    </label>
                    {nameProblem && (
                      <Text size="1" color="red" id={`explore-${i}-name-problem`} data-testid="explore-name-problem">
                        {nameProblem}
                      </Text>
                    )}
                    <SettingsFields idPrefix={`explore-${i}`} models={models} value={b.settings} onChange={(settings) => setDraft(updateBranch(draft, b.key, { settings }))} />
                    <label className="explore-field">
                      Prompt for this branch
                      <textarea
                        aria-label="Prompt for this branch"
                        data-testid={`explore-${i}-prompt`}
                        rows={2}
                        maxLength={100000}
                        placeholder="optional: else the shared prompt"
                        value={b.prompt}
                        onChange={(e) => setDraft(updateBranch(draft, b.key, { prompt: e.target.value }))}
                      />
                    </label>
                    <Flex justify="end">
                      <Button
                        type="button"
                        size="1"
                        variant="soft"
                        color="gray"
                        data-testid="explore-remove"
                        disabled={n <= minBranches}
                        title={n <= minBranches ? `An exploration has at least ${minBranches} branches` : `Remove branch ${i + 1}`}
                        onClick={() => {
                          setDraft(removeBranch(draft, b.key));
                          // The button goes with its branch: focus stays in the dialog.
                          addRef.current?.focus();
                        }}
                      >
                        Remove
                      </Button>
                    </Flex>
                  </fieldset>
                );
              })}
            </div>
            <Flex gap="2" align="center">
              <Button
                ref={addRef}
                type="button"
                variant="soft"
                data-testid="explore-add"
                disabled={n >= maxBranches}
                title={n >= maxBranches ? `An exploration has at most ${maxBranches} branches` : "Add a branch"}
                onClick={() => {
                  const next = addBranch(draft, parent);
                  if (next.branches.length >= maxBranches && next.branches.length > n) focusName.current = next.branches[next.branches.length - 1].key;
                  setDraft(next);
                }}
              >
                Add branch
              </Button>
              <Text size="1" className="muted" data-testid="explore-count">
                {n} branches ({minBranches} to {maxBranches})
              </Text>
            </Flex>
            <label className="explore-field">
              Check command
              <input
                aria-label="Check command"
                aria-describedby="explore-check-note"
                data-testid="explore-check"
                value={draft.check}
                maxLength={16384}
                autoComplete="off"
                placeholder="e.g. go test ./... or npm test"
                onChange={(e) => setDraft({ ...draft, check: e.target.value })}
              />
            </label>
            <Text size="1" className="muted" id="explore-check-note">
              Runs in each branch's own worktree after each of its turns, for up to {checkTimeoutSeconds} s; empty: no check.
            </Text>
            {problems.prompt && (
              <Text size="1" color="red" data-testid="explore-prompt-problem">
                {problems.prompt}
              </Text>
            )}
            {error && (
              <div className="explore-error" role="alert" data-testid="explore-error" data-code={error.code}>
                <code className="code">{error.code}</code> {error.message}
              </div>
            )}
            <Flex gap="2" justify="end">
              <Button type="button" variant="ghost" color="gray" onClick={onClose}>
                Cancel
              </Button>
              <Button type="submit" data-testid="explore-start" disabled={busy || hasProblems(problems)}>
                Start
              </Button>
            </Flex>
          </Flex>
        </form>
      </Card>
    </div>
  );
}
