// @vitest-environment happy-dom
// The fork dialog and the diff view as a person uses them: clicks and
// typing in a DOM, React running for real.
import { Theme } from "@radix-ui/themes";
import { act, type ReactElement } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, describe, expect, it, vi } from "vitest";
import DiffView from "./DiffView";
import { ForkDialog } from "./ForkDialog";
import type { ForkRequest } from "./state/forkChoice";
import { typeInto } from "./typeInto";

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

let root: Root | undefined;
let host: HTMLElement | undefined;
afterEach(() => {
  act(() => root?.unmount());
  host?.remove();
});

function mount(el: ReactElement): HTMLElement {
  host = document.createElement("div");
  document.body.append(host);
  root = createRoot(host);
  act(() => root!.render(<Theme>{el}</Theme>));
  return host;
}

const parent = { model: "m", reasoningEffort: "low", permissionModeId: "workspace-write", planMode: false };
const inRepo = { mode: "SHARED" };

function forkButton(el: HTMLElement): HTMLButtonElement {
  return [...el.querySelectorAll("button")].find((b) => b.textContent === "Fork")!;
}

describe("ForkDialog, clicked", () => {
  it("Same folder: Fork sends no code", () => {
    const onFork = vi.fn<(r: ForkRequest) => void>();
    const el = mount(<ForkDialog parent={parent} code={inRepo} models={[]} busy={false} from={null} onFork={onFork} onClose={() => {}} />);
    act(() => forkButton(el).click());
    expect(onFork).toHaveBeenCalledWith({});
  });
  it("Own worktree with a branch: Fork sends code WORKTREE and the branch", () => {
    const onFork = vi.fn<(r: ForkRequest) => void>();
    const el = mount(<ForkDialog parent={parent} code={inRepo} models={[]} busy={false} from={{ turnId: "t", text: "" }} onFork={onFork} onClose={() => {}} />);
    expect(el.querySelector('[data-testid="fork-branch"]')).toBeNull();
    act(() => el.querySelector<HTMLInputElement>('[data-testid="fork-own-worktree"]')!.click());
    typeInto(el.querySelector<HTMLInputElement>('[data-testid="fork-branch"]')!, "try-jwt");
    act(() => forkButton(el).click());
    expect(onFork).toHaveBeenCalledWith({ code: { mode: "WORKTREE", branch: "try-jwt" } });
  });
  it("a branch name git refuses: said at once, Fork disabled", () => {
    const onFork = vi.fn<(r: ForkRequest) => void>();
    const el = mount(<ForkDialog parent={parent} code={inRepo} models={[]} busy={false} from={null} onFork={onFork} onClose={() => {}} />);
    act(() => el.querySelector<HTMLInputElement>('[data-testid="fork-own-worktree"]')!.click());
    typeInto(el.querySelector<HTMLInputElement>('[data-testid="fork-branch"]')!, "two words");
    expect(el.querySelector('[data-testid="fork-branch-problem"]')?.textContent).toContain("no spaces");
    expect(forkButton(el).disabled).toBe(true);
  });
  it("outside a repository the Own worktree radio cannot be chosen", () => {
    const onFork = vi.fn<(r: ForkRequest) => void>();
    const el = mount(<ForkDialog parent={parent} code={null} models={[]} busy={false} from={null} onFork={onFork} onClose={() => {}} />);
    act(() => el.querySelector<HTMLInputElement>('[data-testid="fork-own-worktree"]')!.click());
    act(() => forkButton(el).click());
    expect(onFork).toHaveBeenCalledWith({});
  });
  it("Escape closes it", () => {
    const onClose = vi.fn();
    const el = mount(<ForkDialog parent={parent} code={null} models={[]} busy={false} from={null} onFork={() => {}} onClose={onClose} />);
    act(() => el.querySelector('[role="dialog"]')!.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true })));
    expect(onClose).toHaveBeenCalled();
  });
});

const patch = `diff --git a/src/auth.ts b/src/auth.ts
index 1111111..2222222 100644
--- a/src/auth.ts
+++ b/src/auth.ts
@@ -1,3 +1,3 @@
 export function login(user: string) {
-  return "cookie";
+  return "jwt";
 }
diff --git a/notes.txt b/notes.txt
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/notes.txt
@@ -0,0 +1 @@
+hello
`;

describe("DiffView", () => {
  it("shows each file of the patch, its lines highlighted by language", () => {
    const el = mount(<DiffView patch={patch} truncated={false} label="Diff" />);
    const files = [...el.querySelectorAll('[data-testid="diff-file"]')].map((f) => f.getAttribute("data-diff-path"));
    expect(files).toEqual(["src/auth.ts", "notes.txt"]);
    const ts = el.querySelector('[data-diff-path="src/auth.ts"]')!;
    expect(ts.querySelector(".diff-code-insert")?.textContent).toContain('return "jwt";');
    expect(ts.querySelector(".diff-code-delete")?.textContent).toContain('return "cookie";');
    // Prism's tokens: the keyword and the string are marked.
    expect(ts.querySelector(".token.keyword")?.textContent).toBe("export");
    expect([...ts.querySelectorAll(".token.string")].map((t) => t.textContent)).toContain('"jwt"');
    // A text file: no grammar, plain lines.
    expect(el.querySelector('[data-diff-path="notes.txt"] .token')).toBeNull();
    expect(el.querySelector('[data-diff-path="notes.txt"] .diff-code-insert')?.textContent).toBe("hello");
  });
  it("switches to side by side", () => {
    const el = mount(<DiffView patch={patch} truncated label="Diff" />);
    const toggle = [...el.querySelectorAll("button")].find((b) => b.textContent === "Side by side")!;
    act(() => toggle.click());
    expect(el.querySelector("table.diff-split")).not.toBeNull();
    expect(el.textContent).toContain("cut at 4 MiB");
  });
});
