// The workspace forms' input (issue 32): New workspace (a name, a root
// path, and optionally the check Explore runs in each branch after its
// turns, with its time bound, and the setup each new worktree runs) and
// Workspace settings (the check, its bound and the setup of a workspace
// made before). Empty fields of a new workspace are not sent: the server's
// defaults (no check, 600 s, no setup) hold; in the settings an empty
// field clears what was set.
import type { CommandSandbox, CreateWorkspaceInput, UpdateWorkspaceInput } from "../gql/graphql";

// The server's bounds of checkTimeoutSeconds.
export const minCheckSeconds = 1;
export const maxCheckSeconds = 3600;
// The server's default check bound, in seconds.
export const defaultCheckSeconds = 600;

export interface WorkspaceFields {
  name: string;
  rootPath: string;
  checkCommand: string;
  checkTimeoutSeconds: string;
  worktreeSetup: string;
}

// workspaceInput: what createWorkspace gets for the form's fields.
export function workspaceInput(f: WorkspaceFields): CreateWorkspaceInput {
  const input: CreateWorkspaceInput = { name: f.name, rootPath: f.rootPath };
  if (f.checkCommand.trim()) input.checkCommand = f.checkCommand.trim();
  const seconds = f.checkTimeoutSeconds.trim();
  if (seconds) input.checkTimeoutSeconds = Number(seconds);
  if (f.worktreeSetup.trim()) input.worktreeSetup = f.worktreeSetup.trim();
  return input;
}

// SettingsFields are the Workspace settings form's fields, as typed.
export interface SettingsFields {
  checkCommand: string;
  checkTimeoutSeconds: string;
  worktreeSetup: string;
  // unsandboxed: the check and setup run as the person (commandSandbox
  // NONE) rather than in Codex's sandbox as the branch's agent (AGENT).
  unsandboxed: boolean;
}

// settingsFields: the form's fields for the workspace's settings as the
// server has them (the default bound shown empty).
export function settingsFields(w: {
  checkCommand?: string | null;
  checkTimeoutSeconds: number;
  worktreeSetup?: string | null;
  commandSandbox: CommandSandbox;
}): SettingsFields {
  return {
    checkCommand: w.checkCommand ?? "",
    checkTimeoutSeconds: w.checkTimeoutSeconds === defaultCheckSeconds ? "" : String(w.checkTimeoutSeconds),
    worktreeSetup: w.worktreeSetup ?? "",
    unsandboxed: w.commandSandbox === "NONE",
  };
}

// settingsInput: what updateWorkspace gets for the settings form: every
// field, an empty one clearing it (an empty bound: the default again).
export function settingsInput(workspaceId: string, f: SettingsFields): UpdateWorkspaceInput {
  const seconds = f.checkTimeoutSeconds.trim();
  return {
    workspaceId,
    checkCommand: f.checkCommand.trim(),
    checkTimeoutSeconds: seconds ? Number(seconds) : 0,
    worktreeSetup: f.worktreeSetup.trim(),
    commandSandbox: f.unsandboxed ? "NONE" : "AGENT",
  };
}
