// The code side of sessions as the page shows it (issue 24): how many
// files a session changed, what the tree says about it, the totals of a
// list of file changes, and what bringing a worktree's changes back did.
import type { FileChangeFieldsFragment, ListedSessionFragment } from "../gql/graphql";

// TreeCode is what the tree shows beside a session: whether it has its own
// worktree (present on disk, or archived away) and how many files it
// changed. null: nothing to show (not in a repository, or in the shared
// folder).
export interface TreeCode {
  worktree: boolean;
  present: boolean;
  files: number;
}

// Archiving a worktree session removes its worktree (restoring makes it
// again): the list reads no more than archived.
type WithCode = { archived: boolean; code?: ListedSessionFragment["code"] };

export function treeCode(s: WithCode): TreeCode | null {
  const c = s.code;
  if (!c || c.mode !== "WORKTREE") return null;
  return { worktree: true, present: !s.archived, files: c.changes.files.length };
}

// sameTreeCode: whether two sessions show the same in the tree (so the
// tree can keep the item).
export function sameTreeCode(a: WithCode, b: WithCode): boolean {
  const x = treeCode(a),
    y = treeCode(b);
  if (!x || !y) return x === y;
  return x.present === y.present && x.files === y.files;
}

// treeCodeLabel: the tree's words for it.
export function treeCodeLabel(c: TreeCode): string {
  const files = `${c.files} file${c.files === 1 ? "" : "s"} changed`;
  return c.present ? `own worktree, ${files}` : `own worktree (archived), ${files}`;
}

export interface Totals {
  files: number;
  additions: number;
  deletions: number;
}

export function totals(files: readonly Pick<FileChangeFieldsFragment, "additions" | "deletions">[]): Totals {
  let additions = 0,
    deletions = 0;
  for (const f of files) {
    additions += f.additions;
    deletions += f.deletions;
  }
  return { files: files.length, additions, deletions };
}

// totalsText: "3 files, +10 −2".
export function totalsText(t: Totals): string {
  return `${t.files} file${t.files === 1 ? "" : "s"}, +${t.additions} −${t.deletions}`;
}

export interface ApplyResult {
  applied: boolean;
  files: readonly FileChangeFieldsFragment[];
  conflicts: readonly string[];
}

// ApplyOutcome is what the page says after Apply to parent: applied (the
// files), conflicting (the paths, nothing written), or nothing to apply.
export type ApplyOutcome =
  | { kind: "applied"; files: readonly FileChangeFieldsFragment[] }
  | { kind: "conflicts"; paths: readonly string[] }
  | { kind: "nothing" };

// outcomeOf reads a dry run, then the apply that follows a clean one.
export function outcomeOf(dry: ApplyResult, real?: ApplyResult): ApplyOutcome {
  if (dry.conflicts.length > 0) return { kind: "conflicts", paths: dry.conflicts };
  if (real && real.conflicts.length > 0) return { kind: "conflicts", paths: real.conflicts };
  if (real && real.applied) return { kind: "applied", files: real.files };
  return { kind: "nothing" };
}

// needsApply: a dry run that found changes and no conflicts is applied.
export function needsApply(dry: ApplyResult): boolean {
  return dry.conflicts.length === 0 && dry.files.length > 0;
}

const byExtension: Record<string, string> = {
  ts: "typescript",
  mts: "typescript",
  cts: "typescript",
  tsx: "tsx",
  js: "javascript",
  mjs: "javascript",
  cjs: "javascript",
  jsx: "jsx",
  go: "go",
  py: "python",
  rs: "rust",
  rb: "ruby",
  java: "java",
  kt: "kotlin",
  swift: "swift",
  c: "c",
  h: "c",
  cc: "cpp",
  cpp: "cpp",
  hpp: "cpp",
  cs: "csharp",
  php: "php",
  css: "css",
  scss: "scss",
  less: "less",
  html: "markup",
  xml: "markup",
  svg: "markup",
  json: "json",
  md: "markdown",
  yml: "yaml",
  yaml: "yaml",
  toml: "toml",
  sh: "bash",
  bash: "bash",
  sql: "sql",
  lua: "lua",
  ini: "ini",
  graphql: "graphql",
  graphqls: "graphql",
};

const byName: Record<string, string> = { Makefile: "makefile", Dockerfile: "docker", "go.mod": "go-module" };

// languageOf: the syntax to highlight a file's lines with; "" for none.
export function languageOf(path: string): string {
  const name = path.slice(path.lastIndexOf("/") + 1);
  if (byName[name]) return byName[name];
  const dot = name.lastIndexOf(".");
  return dot > 0 ? (byExtension[name.slice(dot + 1).toLowerCase()] ?? "") : "";
}
