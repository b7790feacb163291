// Workspace settings: the shown workspace's check (what Explore runs in
// each branch after its turns), its time limit, the setup each new
// worktree runs and whether those two run sandboxed (commandSandbox),
// read from the server when the form opens and saved with
// updateWorkspace; an emptied field clears what was set.
import { useState } from "react";
import { Button } from "@radix-ui/themes";
import type { UpdateWorkspaceInput } from "./gql/graphql";
import { defaultCheckSeconds, maxCheckSeconds, minCheckSeconds, settingsInput, type SettingsFields } from "./state/workspaceForm";

interface Props {
  wsId: string;
  busy: boolean;
  // onLoad reads the workspace's settings now (null: they could not be
  // read; the page's banner says why).
  onLoad: (ws: string) => Promise<SettingsFields | null>;
  // onSave updates the workspace; saved runs once the server took it.
  onSave: (input: UpdateWorkspaceInput, saved: () => void) => void;
}

export function WorkspaceSettings({ wsId, busy, onLoad, onSave }: Props) {
  // null while the settings are read (the fields wait for them).
  const [fields, setFields] = useState<SettingsFields | null>(null);
  const set = (k: keyof SettingsFields) => (e: { target: { value: string } }) => setFields((f) => f && { ...f, [k]: e.target.value });
  return (
    <details
      className="ws-create"
      onToggle={(e) => {
        if (!e.currentTarget.open) return;
        setFields(null);
        void onLoad(wsId).then((f) => f && setFields(f));
      }}
    >
      <summary data-testid="workspace-settings">Workspace settings</summary>
      <form
        className="ws-form"
        data-testid="workspace-settings-form"
        aria-label="Workspace settings"
        onSubmit={(e) => {
          e.preventDefault();
          if (!fields) return;
          const details = e.currentTarget.closest("details");
          onSave(settingsInput(wsId, fields), () => details?.removeAttribute("open"));
        }}
      >
        <label title="Explore runs it in each branch's worktree after each of its turns; empty: no check">
          Check command{" "}
          <input name="checkCommand" data-testid="settings-check" maxLength={16384} placeholder="e.g. go test ./..." autoComplete="off" disabled={!fields} value={fields?.checkCommand ?? ""} onChange={set("checkCommand")} />
        </label>
        <label title={`How long the check may run, ${minCheckSeconds} to ${maxCheckSeconds} seconds; empty: ${defaultCheckSeconds}`}>
          Check time limit (s){" "}
          <input
            name="checkTimeoutSeconds"
            data-testid="settings-check-timeout"
            type="number"
            min={minCheckSeconds}
            max={maxCheckSeconds}
            step={1}
            placeholder={String(defaultCheckSeconds)}
            disabled={!fields}
            value={fields?.checkTimeoutSeconds ?? ""}
            onChange={set("checkTimeoutSeconds")}
          />
        </label>
        <label title="A shell command run in each new worktree before its fork answers (e.g. npm ci); empty: none">
          Worktree setup{" "}
          <textarea name="worktreeSetup" data-testid="settings-setup" rows={2} maxLength={16384} placeholder="e.g. npm ci" disabled={!fields} value={fields?.worktreeSetup ?? ""} onChange={set("worktreeSetup")} />
        </label>
        <label className="ws-sandbox">
          <input
            type="checkbox"
            name="unsandboxed"
            data-testid="settings-unsandboxed"
            aria-describedby="settings-unsandboxed-help"
            disabled={!fields}
            checked={fields?.unsandboxed ?? false}
            onChange={(e) => {
              const on = e.target.checked;
              setFields((f) => f && { ...f, unsandboxed: on });
            }}
          />{" "}
          Run the check and setup as me, unsandboxed
        </label>
        <p id="settings-unsandboxed-help" className="ws-help" data-testid="settings-unsandboxed-help">
          {fields?.unsandboxed
            ? "Unsandboxed: they may read and change all your files, use the network and see your environment. An agent that edits the files they run gets the same power one turn later."
            : "Sandboxed (recommended): they run in Codex's sandbox with no more power than the branch's agent: its worktree only, no network, nothing else of your machine. A full-access branch's check runs as you."}
        </p>
        <Button type="submit" size="1" data-testid="save-workspace-settings" disabled={busy || !fields}>
          Save
        </Button>
      </form>
    </details>
  );
}
