// @vitest-environment happy-dom
// The New workspace form's check fields (issue 32): sent when filled, left
// out (the server's defaults) when empty.
import { Theme } from "@radix-ui/themes";
import { act } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { CreateWorkspaceInput } from "./gql/graphql";
import { workspaceInput } from "./state/workspaceForm";
import { TopBar } from "./TopBar";

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

let root: Root | undefined;
let host: HTMLElement | undefined;
afterEach(() => {
  act(() => root?.unmount());
  host?.remove();
});

function topBar(onCreate: (input: CreateWorkspaceInput, created: () => void) => void): HTMLElement {
  host = document.createElement("div");
  document.body.append(host);
  root = createRoot(host);
  act(() =>
    root!.render(
      <Theme>
        <TopBar workspaces={[]} conn="live" busy={false} onPick={() => {}} onCreate={onCreate} account={null} rateLimits={null} onCodexSignIn={() => {}} onCodexSignOut={() => {}} />
      </Theme>,
    ),
  );
  return host;
}

function fill(el: HTMLElement, testId: string, value: string) {
  const input = el.querySelector<HTMLInputElement>(`[data-testid="${testId}"]`)!;
  input.value = value;
}

function submit(el: HTMLElement) {
  act(() => el.querySelector('[data-testid="workspace-form"]')!.dispatchEvent(new Event("submit", { bubbles: true, cancelable: true })));
}

describe("New workspace", () => {
  it("sends the check command and its time limit when filled", () => {
    const onCreate = vi.fn();
    const el = topBar(onCreate);
    const labels = [...el.querySelectorAll('[data-testid="workspace-form"] label')].map((l) => l.textContent?.trim());
    expect(labels).toContain("Check command");
    expect(labels).toContain("Check time limit (s)");
    fill(el, "workspace-name", "proj");
    fill(el, "workspace-root", "/src/proj");
    fill(el, "workspace-check", "  go test ./...  ");
    fill(el, "workspace-check-timeout", "120");
    submit(el);
    expect(onCreate).toHaveBeenCalledWith({ name: "proj", rootPath: "/src/proj", checkCommand: "go test ./...", checkTimeoutSeconds: 120 }, expect.any(Function));
  });
  it("leaves them out when empty", () => {
    const onCreate = vi.fn();
    const el = topBar(onCreate);
    fill(el, "workspace-name", "proj");
    fill(el, "workspace-root", "/src/proj");
    fill(el, "workspace-check", "   ");
    submit(el);
    expect(onCreate).toHaveBeenCalledWith({ name: "proj", rootPath: "/src/proj" }, expect.any(Function));
  });
});

describe("workspaceInput", () => {
  it("trims the command and reads the seconds as a number", () => {
    expect(workspaceInput({ name: "a", rootPath: "/a", checkCommand: " npm test ", checkTimeoutSeconds: " 30 " })).toEqual({
      name: "a",
      rootPath: "/a",
      checkCommand: "npm test",
      checkTimeoutSeconds: 30,
    });
    expect(workspaceInput({ name: "a", rootPath: "/a", checkCommand: "", checkTimeoutSeconds: "" })).toEqual({ name: "a", rootPath: "/a" });
  });
});
