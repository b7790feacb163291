// The top bar: the workspace picker, the form for a new workspace (with
// the check Explore runs in its branches and its worktrees' setup), the
// shown workspace's settings, and the live-updates indicator; Codex's
// account with `Sign out` (or `Sign in`).
import { memo, useEffect, useRef } from "react";
import { Button, Text } from "@radix-ui/themes";
import { Meter } from "./Meter";
import { accountLabel, type Account } from "./state/account";
import { usageMeter } from "./state/meters";
import type { Conn } from "./state/activity";
import type { CreateWorkspaceInput, RateLimitsFieldsFragment, UpdateWorkspaceInput, WorkspaceFieldsFragment } from "./gql/graphql";
import { maxCheckSeconds, minCheckSeconds, workspaceInput, type SettingsFields } from "./state/workspaceForm";
import { WorkspaceSettings } from "./WorkspaceSettings";

interface Props {
  workspaces: WorkspaceFieldsFragment[] | null;
  wsId?: string;
  conn: Conn;
  busy: boolean;
  onPick: (ws: string) => void;
  // onCreate makes the workspace; created runs once the server took it.
  onCreate: (input: CreateWorkspaceInput, created: () => void) => void;
  // The shown workspace's settings: read when the form opens, saved.
  onLoadSettings: (ws: string) => Promise<SettingsFields | null>;
  onSaveSettings: (input: UpdateWorkspaceInput, saved: () => void) => void;
  account: Account | null;
  rateLimits: RateLimitsFieldsFragment | null;
  onCodexSignIn: () => void;
  onCodexSignOut: () => void;
}

export const TopBar = memo(function TopBar({ workspaces, wsId, conn, busy, onPick, onCreate, onLoadSettings, onSaveSettings, account, rateLimits, onCodexSignIn, onCodexSignOut }: Props) {
  const usage = usageMeter(rateLimits);
  const noWorkspaces = workspaces !== null && workspaces.length === 0;
  const header = useRef<HTMLElement>(null);
  // One form open at a time (New workspace, Workspace settings: they
  // open over the same place). toggle does not bubble; capture sees it.
  useEffect(() => {
    const el = header.current;
    if (!el) return;
    const onToggle = (e: Event) => {
      const opened = e.target;
      if (!(opened instanceof HTMLDetailsElement) || !opened.open) return;
      for (const d of el.querySelectorAll("details[open]")) if (d !== opened) d.removeAttribute("open");
    };
    el.addEventListener("toggle", onToggle, true);
    return () => el.removeEventListener("toggle", onToggle, true);
  }, []);
  return (
    <header
      className="topbar"
      ref={header}
      onKeyDown={(e) => {
        // Escape closes the open form and gives focus back to its summary.
        if (e.key !== "Escape") return;
        const d = (e.target as HTMLElement).closest("details[open]");
        if (!d) return;
        d.removeAttribute("open");
        d.querySelector("summary")?.focus();
      }}
    >
      <span className="brand">tuttid</span>
      <label className="ws-picker">
        <Text size="2">Workspace</Text>
        <select data-testid="workspace-select" aria-label="Workspace" value={wsId ?? ""} onChange={(e) => e.target.value && onPick(e.target.value)}>
          {(workspaces ?? []).map((w) => (
            <option key={w.id} value={w.id} title={w.rootPath}>
              {w.name}
            </option>
          ))}
        </select>
      </label>
      <details className="ws-create" open={noWorkspaces || undefined}>
        <summary data-testid="new-workspace">New workspace</summary>
        <form
          className="ws-form"
          data-testid="workspace-form"
          onSubmit={(e) => {
            e.preventDefault();
            const form = e.currentTarget;
            const f = new FormData(form);
            const field = (k: string) => String(f.get(k) ?? "");
            const input = workspaceInput({
              name: field("name"),
              rootPath: field("rootPath"),
              checkCommand: field("checkCommand"),
              checkTimeoutSeconds: field("checkTimeoutSeconds"),
              worktreeSetup: field("worktreeSetup"),
            });
            onCreate(input, () => {
              form.reset();
              form.closest("details")?.removeAttribute("open");
            });
          }}
        >
          <label>
            Name <input name="name" data-testid="workspace-name" required maxLength={200} autoComplete="off" />
          </label>
          <label>
            Root path <input name="rootPath" data-testid="workspace-root" required placeholder="/home/me/project" autoComplete="off" />
          </label>
          <label title="Explore runs it in each branch's worktree after each of its turns; empty: no check">
            Check command <input name="checkCommand" data-testid="workspace-check" maxLength={16384} placeholder="e.g. go test ./... (optional)" autoComplete="off" />
          </label>
          <label title={`How long the check may run, ${minCheckSeconds} to ${maxCheckSeconds} seconds; empty: 600`}>
            Check time limit (s){" "}
            <input name="checkTimeoutSeconds" data-testid="workspace-check-timeout" type="number" min={minCheckSeconds} max={maxCheckSeconds} step={1} placeholder="600" />
          </label>
          <label title="A shell command run in each new worktree before its fork answers (e.g. npm ci); empty: none">
            Worktree setup <textarea name="worktreeSetup" data-testid="workspace-setup" rows={2} maxLength={16384} placeholder="e.g. npm ci (optional)" />
          </label>
          <Button type="submit" size="1" data-testid="create-workspace" disabled={busy}>
            Create
          </Button>
        </form>
      </details>
      {wsId && <WorkspaceSettings key={wsId} wsId={wsId} busy={busy} onLoad={onLoadSettings} onSave={onSaveSettings} />}
      <span className="spacer" />
      {usage && <Meter name="Usage" view={usage} testId="usage-meter" />}
      {account && (account.requiresOpenaiAuth || account.authMode) && (
        <span className="codex-account" data-testid="codex-account" data-signed-in={account.signedIn}>
          <Text size="2" title="Codex's account">
            {accountLabel(account)}
          </Text>
          {account.signedIn && account.authMode && (
            <Button size="1" variant="soft" color="gray" onClick={onCodexSignOut}>
              Sign out
            </Button>
          )}
          {!account.signedIn && (
            <Button size="1" variant="soft" onClick={onCodexSignIn}>
              Sign in
            </Button>
          )}
        </span>
      )}
      <span className="conn" data-testid="connection" data-state={conn} title="Live updates">
        {connText(conn)}
      </span>
    </header>
  );
});

// connText: the live-updates badge. Before any workspace is shown there is
// nothing to follow: it says so rather than "offline".
export function connText(conn: string): string {
  switch (conn) {
    case "live":
      return "live";
    case "idle":
      return "no workspace yet";
    case "closed":
      return "offline";
  }
  return `${conn}…`;
}
