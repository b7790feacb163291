// What the Explore dialog holds and sends (issue 32): 2 to 8 branches,
// each with a name (a, b, c… to start), its settings (starting from the
// explored session's; only what the person changes is sent, as a fork
// does) and an optional prompt; a shared prompt; the check command
// (starting from the workspace's; sent only when changed, so the
// workspace's stays the one in effect otherwise).
import type { ExploreSessionInput } from "../gql/graphql";
import { changed, type Settings } from "./settings";

// The server's bounds (explore.MinBranches, MaxBranches).
export const minBranches = 2;
export const maxBranches = 8;

export interface BranchDraft {
  // Stable across removals: React's key.
  key: number;
  name: string;
  settings: Settings;
  prompt: string;
}

export interface ExploreDraft {
  branches: BranchDraft[];
  prompt: string;
  check: string;
  nextKey: number;
}

const letters = "abcdefghijklmnopqrstuvwxyz";

// freeName: the first letter no branch is named yet.
function freeName(branches: readonly BranchDraft[]): string {
  const used = new Set(branches.map((b) => b.name.trim()));
  for (const l of letters) if (!used.has(l)) return l;
  for (let i = 1; ; i++) if (!used.has(`branch-${i}`)) return `branch-${i}`;
}

// startDraft: two branches, a and b, on the explored session's settings.
export function startDraft(parent: Settings, check: string): ExploreDraft {
  const d: ExploreDraft = { branches: [], prompt: "", check, nextKey: 0 };
  return addBranch(addBranch(d, parent), parent);
}

// addBranch adds one (up to maxBranches) named with the next free letter.
export function addBranch(d: ExploreDraft, parent: Settings): ExploreDraft {
  if (d.branches.length >= maxBranches) return d;
  const b: BranchDraft = { key: d.nextKey, name: freeName(d.branches), settings: parent, prompt: "" };
  return { ...d, branches: [...d.branches, b], nextKey: d.nextKey + 1 };
}

// removeBranch removes one (down to minBranches).
export function removeBranch(d: ExploreDraft, key: number): ExploreDraft {
  if (d.branches.length <= minBranches) return d;
  return { ...d, branches: d.branches.filter((b) => b.key !== key) };
}

// updateBranch changes one branch.
export function updateBranch(d: ExploreDraft, key: number, change: Partial<Omit<BranchDraft, "key">>): ExploreDraft {
  return { ...d, branches: d.branches.map((b) => (b.key === key ? { ...b, ...change } : b)) };
}

const branchName = /^[a-z0-9][a-z0-9-]{0,31}$/;

export interface Problems {
  // By branch key: why its name would be refused.
  names: ReadonlyMap<number, string>;
  // Why the prompts would be refused (a branch without one, none shared).
  prompt: string;
}

// problemsOf: what the server would refuse (invalid_input), said before
// Start is pressed; empty when nothing is seen.
export function problemsOf(d: ExploreDraft): Problems {
  const names = new Map<number, string>();
  const count = new Map<string, number>();
  for (const b of d.branches) count.set(b.name.trim(), (count.get(b.name.trim()) ?? 0) + 1);
  for (const b of d.branches) {
    const n = b.name.trim();
    if (!branchName.test(n)) names.set(b.key, "A name is 1 to 32 of a-z, 0-9 and -, starting with a letter or digit.");
    else if ((count.get(n) ?? 0) > 1) names.set(b.key, "Another branch has this name.");
  }
  const unprompted = d.branches.filter((b) => !b.prompt.trim()).map((b) => b.name.trim() || "?");
  const prompt = d.prompt.trim() || unprompted.length === 0 ? "" : `Write the shared prompt, or one for ${unprompted.length === 1 ? "branch" : "branches"} ${unprompted.join(", ")}.`;
  return { names, prompt };
}

export function hasProblems(p: Problems): boolean {
  return p.names.size > 0 || !!p.prompt;
}

export interface Target {
  workspaceId: string;
  agentSessionId: string;
  lastTurnId: string;
  // The workspace's check command ("" for none).
  workspaceCheck: string;
}

// exploreInput: what exploreSession gets for the draft, without its
// requestId.
export function exploreInput(d: ExploreDraft, parent: Settings, t: Target): Omit<ExploreSessionInput, "requestId"> {
  const out: Omit<ExploreSessionInput, "requestId"> = {
    workspaceId: t.workspaceId,
    agentSessionId: t.agentSessionId,
    lastTurnId: t.lastTurnId,
    branches: d.branches.map((b) => {
      const settings = changed(parent, b.settings);
      return {
        name: b.name.trim(),
        ...(b.prompt.trim() ? { prompt: b.prompt } : {}),
        ...(settings ? { settings } : {}),
      };
    }),
  };
  if (d.prompt.trim()) out.prompt = d.prompt;
  const check = d.check.trim();
  if (check !== t.workspaceCheck.trim()) out.checkCommand = check;
  return out;
}

// Sent is the last request the dialog sent: Start again with the same
// input (after a network error, say) sends the same requestId, so the
// server answers what it made, if it made it; changed input is a new
// request.
export interface Sent {
  key: string;
  requestId: string;
}

export function requestFor(last: Sent | null, input: Omit<ExploreSessionInput, "requestId">, fresh: () => string): Sent {
  const key = JSON.stringify(input);
  return last && last.key === key ? last : { key, requestId: fresh() };
}
