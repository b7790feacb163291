// The shown session's header: its title (or the rename form), status, the
// session it was forked from, and the actions on it (fork, compare, rename,
// archive, delete).
import { Badge, Button, Flex, Heading } from "@radix-ui/themes";
import { useState } from "react";
import { ComparePicker } from "./Compare";
import type { SessionHeadFragment, SessionSummaryFragment } from "./gql/graphql";
import { Meter } from "./Meter";
import { contextMeter } from "./state/meters";
import { StatusBadge } from "./Status";
import { RenameForm, TidyActions } from "./Tidy";
import { disabledTitle } from "./state/availability";
import { UnavailableBadge } from "./Unavailable";

interface Props {
  head: SessionHeadFragment;
  busy: boolean;
  // Why its commands cannot run now (owner instance down), or null.
  unavailable: string | null;
  // The other sessions of its fork tree, and how many descend from it.
  sameTree: SessionSummaryFragment[];
  descendants: number;
  onOpen: (id: string) => void;
  // onFork opens the fork dialog for the whole conversation.
  onFork: () => void;
  onCompare: (id: string) => void;
  onRename: (title: string) => Promise<boolean>;
  onArchive: (archived: boolean) => void;
  // onDelete resolves to why the server refused (unapplied worktree
  // changes), or null.
  onDelete: (discardChanges?: boolean) => Promise<string | null>;
}

export function SessionHeader(p: Props) {
  const { head } = p;
  const [renaming, setRenaming] = useState(false);
  const context = contextMeter(head.tokenUsage);
  return (
    <header className="session-head">
      <div className="session-titles">
        {renaming ? (
          <RenameForm title={head.title || head.displayTitle} busy={p.busy} onRename={p.onRename} onDone={() => setRenaming(false)} />
        ) : (
          <Flex align="center" gap="2" wrap="wrap">
            <Heading as="h1" size="4" id="session-title" data-testid="session-title">
              {head.displayTitle}
            </Heading>
            <span data-testid="session-status">
              <StatusBadge status={head.status} />
            </span>
            {(head.settings.model || head.settings.reasoningEffort) && (
              <Badge color="gray" variant="soft" data-testid="session-model" title="Model and reasoning effort">
                {[head.settings.model ?? "default model", head.settings.reasoningEffort].filter(Boolean).join(" · ")}
              </Badge>
            )}
            {context && <Meter name="Context" view={context} testId="context-meter" />}
            {p.unavailable && <UnavailableBadge reason={p.unavailable} full />}
            {head.archived && (
              <Badge color="gray" variant="outline" data-testid="archived-badge">
                archived
              </Badge>
            )}
          </Flex>
        )}
        <button
          type="button"
          className="parent-link"
          data-testid="parent-indicator"
          data-parent-id={head.parent?.id}
          hidden={!head.parent}
          onClick={() => head.parent && p.onOpen(head.parent.id)}
        >
          Forked from {head.parent?.displayTitle}
        </button>
      </div>
      <div className="session-actions" role="toolbar" aria-label="Session">
        <Button variant="soft" data-testid="fork-conversation" title={disabledTitle(p.unavailable, "Fork the whole conversation into a new session: its settings and where its code goes")} disabled={p.busy || !!p.unavailable} onClick={p.onFork}>
          Fork conversation
        </Button>
        <ComparePicker options={p.sameTree} busy={p.busy} onCompare={p.onCompare} />
        <TidyActions
          title={head.displayTitle}
          archived={head.archived}
          descendants={p.descendants}
          busy={p.busy}
          onRename={p.onRename}
          onStartRename={() => setRenaming(true)}
          onArchive={p.onArchive}
          onDelete={p.onDelete}
        />
      </div>
    </header>
  );
}
