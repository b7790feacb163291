// The New workspace form's input (issue 32): a name, a root path, and
// optionally the check Explore runs in each branch after its turns, with
// its time bound. Empty check fields are not sent: the server's defaults
// (no check, 600 s) hold.
import type { CreateWorkspaceInput } from "../gql/graphql";

// The server's bounds of checkTimeoutSeconds.
export const minCheckSeconds = 1;
export const maxCheckSeconds = 3600;

export interface WorkspaceFields {
  name: string;
  rootPath: string;
  checkCommand: string;
  checkTimeoutSeconds: string;
}

// workspaceInput: what createWorkspace gets for the form's fields.
export function workspaceInput(f: WorkspaceFields): CreateWorkspaceInput {
  const input: CreateWorkspaceInput = { name: f.name, rootPath: f.rootPath };
  if (f.checkCommand.trim()) input.checkCommand = f.checkCommand.trim();
  const seconds = f.checkTimeoutSeconds.trim();
  if (seconds) input.checkTimeoutSeconds = Number(seconds);
  return input;
}
