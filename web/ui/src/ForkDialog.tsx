// The fork dialog, the one `Fork conversation` and `Fork from here` open
// (issues 23 and 24): the child's Model, Reasoning effort, Permissions and
// Plan mode, starting from the parent's (only what the person changes is
// sent), and where its code goes: `Same folder` (the parent's directory)
// or `Own worktree` (a git worktree of its own, on an optional new branch;
// only for a session in a repository). Non-modal role="dialog" (see
// CodexSignIn for why not Radix's).
import { Button, Card, Flex, Heading, Text } from "@radix-ui/themes";
import { useState } from "react";
import type { CodexModelFieldsFragment } from "./gql/graphql";
import { SettingsFields } from "./SettingsFields";
import { branchProblem, canOwnWorktree, forkRequest, startChoice, type ForkRequest } from "./state/forkChoice";
import type { Settings } from "./state/settings";

interface Props {
  parent: Settings;
  // The parent's code: null outside a repository.
  code: unknown;
  models: readonly CodexModelFieldsFragment[];
  busy: boolean;
  // What is forked: the whole conversation, or up to a turn (its words).
  from: { turnId: string; text: string } | null;
  onFork: (req: ForkRequest) => void;
  onClose: () => void;
}

export function ForkDialog({ parent, code, models, busy, from, onFork, onClose }: Props) {
  const [choice, setChoice] = useState(() => startChoice(parent));
  const repo = canOwnWorktree(code);
  const problem = choice.place === "WORKTREE" ? branchProblem(choice.branch) : "";
  return (
    <div
      className="fork-dialog"
      role="dialog"
      aria-labelledby="fork-dialog-title"
      data-testid="fork-dialog"
      data-turn-id={from?.turnId}
      onKeyDown={(e) => {
        if (e.key === "Escape") onClose();
      }}
    >
      <Card size="2">
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (!problem) onFork(forkRequest(parent, choice, repo));
          }}
        >
          <Flex direction="column" gap="3">
            <Heading as="h2" size="3" id="fork-dialog-title">
              {from ? "Fork from here" : "Fork conversation"}
            </Heading>
            <Text size="2" className="muted" data-testid="fork-dialog-from">
              {from ? `The conversation up to “${from.text || "this turn"}”, into a new session.` : "The whole conversation, into a new session."}
            </Text>
            <SettingsFields idPrefix="fork" models={models} value={choice.settings} onChange={(settings) => setChoice({ ...choice, settings })} />
            <div role="radiogroup" aria-label="Code" className="fork-code" data-testid="fork-code">
              <label>
                <input
                  type="radio"
                  name="fork-code"
                  value="SHARED"
                  data-testid="fork-same-folder"
                  checked={choice.place === "SHARED"}
                  onChange={() => setChoice({ ...choice, place: "SHARED" })}
                />
                Same folder
              </label>
              <label title={repo ? "The child gets a git worktree of its own, with the files as they were at the fork" : "Only for a session in a git repository"}>
                <input
                  type="radio"
                  name="fork-code"
                  value="WORKTREE"
                  data-testid="fork-own-worktree"
                  disabled={!repo}
                  checked={choice.place === "WORKTREE"}
                  onChange={() => setChoice({ ...choice, place: "WORKTREE" })}
                />
                Own worktree
              </label>
              {!repo && (
                <Text size="1" className="muted" data-testid="fork-no-repository">
                  This session's folder is not in a git repository: its fork works in the same folder.
                </Text>
              )}
              {repo && choice.place === "WORKTREE" && (
                <label className="fork-branch">
                  Branch
                  <input
                    aria-label="Branch name"
                    data-testid="fork-branch"
                    value={choice.branch}
                    placeholder="optional: a new branch (else a detached HEAD)"
                    autoComplete="off"
                    maxLength={200}
                    aria-invalid={problem ? true : undefined}
                    aria-describedby={problem ? "fork-branch-problem" : undefined}
                    onChange={(e) => setChoice({ ...choice, branch: e.target.value })}
                  />
                </label>
              )}
              {problem && (
                <Text size="1" color="red" id="fork-branch-problem" data-testid="fork-branch-problem">
                  {problem}
                </Text>
              )}
            </div>
            <Flex gap="2" justify="end">
              <Button type="button" variant="ghost" color="gray" onClick={onClose}>
                Cancel
              </Button>
              <Button type="submit" data-testid="fork-dialog-submit" disabled={busy || !!problem} autoFocus>
                Fork
              </Button>
            </Flex>
          </Flex>
        </form>
      </Card>
    </div>
  );
}
