// The sidebar: a new session, the workspace's fork tree, and whether it
// lists archived sessions.
import { memo } from "react";
import { Button, Flex, Text } from "@radix-ui/themes";
import type { CodexModelFieldsFragment } from "./gql/graphql";
import { SettingsFields } from "./SettingsFields";
import type { Settings } from "./state/settings";
import { ForkTree } from "./Tree";
import type { TreeSession } from "./treeRows";

interface Props {
  wsId?: string;
  sessions: TreeSession[];
  activeId?: string;
  busy: boolean;
  showArchived: boolean;
  onNew: () => void;
  onSelect: (id: string) => void;
  onShowArchived: (show: boolean) => void;
  // The settings of the next New session.
  models: readonly CodexModelFieldsFragment[];
  newSettings: Settings;
  onNewSettings: (s: Settings) => void;
}

export const Sidebar = memo(function Sidebar(p: Props) {
  return (
    <nav className="sidebar" aria-label="Sessions">
      <Button data-testid="new-session" disabled={!p.wsId || p.busy} onClick={p.onNew}>
        New session
      </Button>
      <details className="new-settings" data-testid="new-session-settings">
        <summary>New session settings</summary>
        <SettingsFields idPrefix="new" models={p.models} value={p.newSettings} onChange={p.onNewSettings} />
      </details>
      <ForkTree sessions={p.sessions} selected={p.activeId} onSelect={p.onSelect} />
      {p.wsId && p.sessions.length === 0 && (
        <Text size="2" className="muted" data-testid="no-sessions">
          No sessions yet.
        </Text>
      )}
      <Text as="label" size="1" className="muted show-archived">
        <Flex gap="1" align="center">
          <input type="checkbox" data-testid="show-archived" checked={p.showArchived} onChange={(e) => p.onShowArchived(e.target.checked)} />
          Show archived sessions
        </Flex>
      </Text>
    </nav>
  );
});
