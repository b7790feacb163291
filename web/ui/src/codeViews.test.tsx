// @vitest-environment happy-dom
// The code hooks of the contract (issue 24) in the rendered markup, with
// mock code fields (the server answers null until its code side lands).
import { Theme } from "@radix-ui/themes";
import type { ReactElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { CodeChanges } from "./CodeChanges";
import { CompareView } from "./Compare";
import { Conversation } from "./Conversation";
import { ForkDialog } from "./ForkDialog";
import { MessageView } from "./MessageView";
import type { ComparisonFragment, FileChangeFieldsFragment, SessionCodeFieldsFragment, SessionHeadFragment, TurnWithMessagesFragment } from "./gql/graphql";

// render returns the markup as a document to query.
function render(el: ReactElement): Document {
  const html = renderToStaticMarkup(<Theme>{el}</Theme>);
  return new DOMParser().parseFromString(html, "text/html");
}

const fc = (path: string, status: FileChangeFieldsFragment["status"] = "MODIFIED"): FileChangeFieldsFragment => ({ path, status, additions: 2, deletions: 1 });
const code = (mode: "SHARED" | "WORKTREE", files: FileChangeFieldsFragment[]): SessionCodeFieldsFragment => ({
  mode,
  repositoryRoot: "/repo",
  worktreePath: mode === "WORKTREE" ? "/data/worktrees/w/s" : null,
  worktreePresent: true,
  branch: mode === "WORKTREE" ? "try-oauth" : null,
  base: mode === "WORKTREE" ? { commit: "abc", head: "def", createdAt: "" } : null,
  changes: { files, truncated: false },
  setupOutput: mode === "WORKTREE" ? "npm ci: done" : null,
});
const parent = { model: "m", reasoningEffort: "low", permissionModeId: "workspace-write", planMode: false };
const none = () => {};

describe("ForkDialog", () => {
  it("outside a repository: Same folder chosen, Own worktree disabled, one Fork button", () => {
    const d = render(<ForkDialog parent={parent} code={null} models={[]} busy={false} from={null} onFork={none} onClose={none} />);
    const dialog = d.querySelector('[role="dialog"]')!;
    expect(dialog).not.toBeNull();
    expect(d.getElementById("fork-dialog-title")?.textContent).toBe("Fork conversation");
    const same = d.querySelector<HTMLInputElement>('[data-testid="fork-same-folder"]')!;
    const own = d.querySelector<HTMLInputElement>('[data-testid="fork-own-worktree"]')!;
    expect(same.closest("label")?.textContent).toBe("Same folder");
    expect(own.closest("label")?.textContent).toBe("Own worktree");
    expect(same.checked).toBe(true);
    expect(own.disabled).toBe(true);
    expect([...dialog.querySelectorAll("button")].filter((b) => b.textContent === "Fork")).toHaveLength(1);
    // The settings of "Codex for real" are in the same dialog.
    expect(dialog.querySelector('[role="radiogroup"][aria-label="Permissions"]')).not.toBeNull();
    expect(dialog.querySelector('[aria-label="Model"]')).not.toBeNull();
  });
  it("in a repository, from a turn: Own worktree enabled, titled Fork from here", () => {
    const d = render(<ForkDialog parent={parent} code={code("SHARED", [])} models={[]} busy={false} from={{ turnId: "t1", text: "add login" }} onFork={none} onClose={none} />);
    expect(d.querySelector<HTMLInputElement>('[data-testid="fork-own-worktree"]')!.disabled).toBe(false);
    expect(d.getElementById("fork-dialog-title")?.textContent).toBe("Fork from here");
    expect(d.querySelector('[role="dialog"]')?.getAttribute("data-turn-id")).toBe("t1");
    expect(d.querySelector('[data-testid="fork-dialog-from"]')?.textContent).toContain("add login");
  });
});

describe("CodeChanges", () => {
  it("a worktree session: the Changes region lists each file, with Apply to parent", () => {
    const d = render(<CodeChanges code={code("WORKTREE", [fc("a.go"), fc("web/b.ts", "ADDED")])} hasParent busy={false} loadPatch={async () => null} onApply={async () => null} />);
    const region = d.querySelector('section[aria-label="Changes"]')!;
    expect(region).not.toBeNull();
    expect([...region.querySelectorAll("[data-file-path]")].map((e) => e.getAttribute("data-file-path"))).toEqual(["a.go", "web/b.ts"]);
    expect([...region.querySelectorAll("button")].map((b) => b.textContent)).toContain("Apply to parent");
    expect(region.textContent).toContain("on try-oauth");
    expect(region.querySelector('[data-testid="changes-totals"]')?.textContent).toBe("2 files, +4 −2");
    expect(region.querySelector('[data-testid="setup-output"] pre')?.textContent).toBe("npm ci: done");
  });
  it("a session in the shared folder: no Apply to parent", () => {
    const d = render(<CodeChanges code={code("SHARED", [fc("a.go")])} hasParent busy={false} loadPatch={async () => null} onApply={async () => null} />);
    expect([...d.querySelectorAll("button")].map((b) => b.textContent)).not.toContain("Apply to parent");
    expect(d.querySelector('[data-file-path="a.go"]')).not.toBeNull();
    expect(d.querySelector('[data-testid="setup-output"]')).toBeNull();
  });
});

describe("Conversation", () => {
  const head = {
    id: "s",
    workspaceId: "w",
    title: "s",
    displayTitle: "s",
    status: "READY",
    archived: false,
    createdAt: "",
    updatedAt: "",
    cwd: "/repo",
    settings: { model: null, reasoningEffort: null, permissionModeId: null, planMode: false },
    tokenUsage: null,
    parent: null,
    forkedFrom: null,
    available: true,
    unavailableReason: null,
    forkPoints: [],
    code: null,
  } as SessionHeadFragment;
  const turn = (id: string, files: FileChangeFieldsFragment[] | null): TurnWithMessagesFragment => ({
    id,
    status: "COMPLETED",
    error: null,
    errorCode: null,
    startedAt: "",
    completedAt: "",
    diff: files ? { files, truncated: false } : null,
    messages: [],
  });
  it("shows the files of a turn with a non-empty diff inside its turn element", () => {
    const d = render(
      <Conversation
        wsId="w"
        head={head}
        turns={[turn("t1", [fc("a.go")]), turn("t2", []), turn("t3", null)]}
        messages={[]}
        streams={new Map()}
        retries={new Map()}
        hasEarlier={false}
        loadingEarlier={false}
        onLoadEarlier={none}
        inherited={new Set()}
        marks={new Map()}
        busy={false}
        onForkFrom={none}
        exploreBlocked={null}
        onExploreFrom={none}
        onOpen={none}
        approvals={[]}
        onDecide={none}
      />,
    );
    expect(d.querySelector('[data-turn-id="t1"] [data-file-path="a.go"]')).not.toBeNull();
    expect(d.querySelector('[data-turn-id="t2"] [data-testid="turn-files"]')).toBeNull();
    expect(d.querySelector('[data-turn-id="t3"] [data-testid="turn-files"]')).toBeNull();
  });
});

describe("CompareView", () => {
  const side = (id: string) => ({ id, displayTitle: id.toUpperCase(), status: "READY" as const });
  const cmp = (withCode: boolean): ComparisonFragment => ({
    sharedTurnCount: 0,
    a: side("a"),
    b: side("b"),
    commonAncestor: null,
    sharedTurns: [],
    aOnly: [],
    bOnly: [],
    code: withCode
      ? {
          base: { commit: "0123456789abcdef" },
          aChanges: { files: [fc("a.go")], truncated: false },
          bChanges: { files: [fc("b.go", "ADDED"), fc("c.go", "DELETED")], truncated: false },
          diff: { files: [fc("a.go")], patch: "", truncated: false },
        }
      : null,
  });
  it("shows the Code region with each side's changed files", () => {
    const d = render(<CompareView cmp={cmp(true)} onOpen={none} onClose={none} />);
    const region = d.querySelector('section[aria-label="Code"]')!;
    expect(region).not.toBeNull();
    const paths = (sel: string) => [...region.querySelectorAll(`${sel} [data-file-path]`)].map((e) => e.getAttribute("data-file-path"));
    expect(paths('[data-testid="code-a"]')).toEqual(["a.go"]);
    expect(paths('[data-testid="code-b"]')).toEqual(["b.go", "c.go"]);
    expect(region.textContent).toContain("0123456789");
  });
  it("has no Code region without code", () => {
    const d = render(<CompareView cmp={cmp(false)} onOpen={none} onClose={none} />);
    expect(d.querySelector('section[aria-label="Code"]')).toBeNull();
  });
});

describe("MessageView", () => {
  it("shows Codex's context compaction as a sentence, not a raw item", () => {
    const d = render(
      <MessageView
        m={{ id: "m1", turnId: "t1", role: "context_compaction", kind: "contextCompaction", text: "", content: { type: "contextCompaction" }, status: "completed", version: 1, createdAt: "" }}
      />,
    );
    expect(d.querySelector('[data-testid="context-compaction"]')?.textContent).toContain("summarized the conversation so far");
    expect(d.querySelector("details.raw")).toBeNull();
  });
});
