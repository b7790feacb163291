// What the fork dialog sends: the settings the person changed from the
// parent's, and where the child's code goes (Same folder: nothing sent, the
// server's SHARED default; Own worktree: code {mode: WORKTREE, branch?},
// only for a session in a repository).
import type { ComposerSettingsInput, ForkCodeInput } from "../gql/graphql";
import { changed, type Settings } from "./settings";

export type Place = "SHARED" | "WORKTREE";

export interface ForkChoice {
  settings: Settings;
  place: Place;
  // A new branch for the worktree; empty leaves HEAD detached.
  branch: string;
}

export interface ForkRequest {
  settings?: ComposerSettingsInput;
  code?: ForkCodeInput;
}

// startChoice: the dialog opens on the parent's settings, in the same
// folder.
export function startChoice(parent: Settings): ForkChoice {
  return { settings: parent, place: "SHARED", branch: "" };
}

// canOwnWorktree: Own worktree needs the session in a git repository
// (its code is null outside one).
export function canOwnWorktree(code: unknown): boolean {
  return code !== null && code !== undefined;
}

// forkRequest: what the fork mutation gets for the choice.
export function forkRequest(parent: Settings, c: ForkChoice, inRepository: boolean): ForkRequest {
  const out: ForkRequest = {};
  const settings = changed(parent, c.settings);
  if (settings) out.settings = settings;
  if (c.place === "WORKTREE" && inRepository) {
    const branch = c.branch.trim();
    out.code = branch ? { mode: "WORKTREE", branch } : { mode: "WORKTREE" };
  }
  return out;
}

// branchProblem: why git would refuse the branch name, for what a person
// commonly mistypes (git check-ref-format has the rest; the server answers
// those). Empty when none is seen.
export function branchProblem(name: string): string {
  const b = name.trim();
  if (!b) return "";
  if (/\s/.test(b)) return "A branch name has no spaces.";
  if (b.startsWith("-") || b.startsWith("/") || b.endsWith("/") || b.endsWith(".")) return "A branch name cannot start with - or /, nor end with / or a dot.";
  if (b.includes("..") || b.includes("//") || b.includes("@{") || /[~^:?*[\\\x00-\x1f\x7f]/.test(b) || b.endsWith(".lock") || b === "@") return "Git does not allow this branch name.";
  return "";
}
