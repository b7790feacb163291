// @vitest-environment happy-dom
// The New workspace form's check and setup fields (issue 32): sent when
// filled, left out (the server's defaults) when empty; Workspace settings:
// read when opened, every field sent on Save, an emptied one clearing it.
import { Theme } from "@radix-ui/themes";
import { act } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { CreateWorkspaceInput, UpdateWorkspaceInput } from "./gql/graphql";
import { settingsFields, settingsInput, workspaceInput, type SettingsFields } from "./state/workspaceForm";
import { connText, TopBar } from "./TopBar";
import { typeInto } from "./typeInto";

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

let root: Root | undefined;
let host: HTMLElement | undefined;
afterEach(() => {
  act(() => root?.unmount());
  host?.remove();
});

interface Settings {
  wsId?: string;
  onLoad?: (ws: string) => Promise<SettingsFields | null>;
  onSave?: (input: UpdateWorkspaceInput, saved: () => void) => void;
}

function topBar(onCreate: (input: CreateWorkspaceInput, created: () => void) => void, settings: Settings = {}): HTMLElement {
  host = document.createElement("div");
  document.body.append(host);
  root = createRoot(host);
  act(() =>
    root!.render(
      <Theme>
        <TopBar
          workspaces={settings.wsId ? [{ id: settings.wsId, name: "proj", rootPath: "/src/proj" }] : []}
          wsId={settings.wsId}
          conn="live"
          busy={false}
          onPick={() => {}}
          onCreate={onCreate}
          onLoadSettings={settings.onLoad ?? (async () => null)}
          onSaveSettings={settings.onSave ?? (() => {})}
          account={null}
          rateLimits={null}
          onCodexSignIn={() => {}}
          onCodexSignOut={() => {}}
        />
      </Theme>,
    ),
  );
  return host;
}

function fill(el: HTMLElement, testId: string, value: string) {
  const input = el.querySelector<HTMLInputElement | HTMLTextAreaElement>(`[data-testid="${testId}"]`)!;
  input.value = value;
}

// type sets a field's value, found by its test id, as typing does.
function type(el: HTMLElement, testId: string, value: string) {
  typeInto(el.querySelector<HTMLInputElement | HTMLTextAreaElement>(`[data-testid="${testId}"]`)!, value);
}

function value(el: HTMLElement, testId: string): string {
  return el.querySelector<HTMLInputElement | HTMLTextAreaElement>(`[data-testid="${testId}"]`)!.value;
}

async function openSettings(el: HTMLElement) {
  const details = el.querySelector('[data-testid="workspace-settings"]')!.closest("details")!;
  await act(async () => {
    details.open = true;
    details.dispatchEvent(new Event("toggle"));
  });
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
    fill(el, "workspace-setup", " npm ci\n");
    submit(el);
    expect(onCreate).toHaveBeenCalledWith(
      { name: "proj", rootPath: "/src/proj", checkCommand: "go test ./...", checkTimeoutSeconds: 120, worktreeSetup: "npm ci" },
      expect.any(Function),
    );
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

describe("Workspace settings", () => {
  it("is not there without a workspace", () => {
    const el = topBar(vi.fn());
    expect(el.querySelector('[data-testid="workspace-settings"]')).toBeNull();
  });
  it("reads the workspace's settings when opened and saves every field", async () => {
    const onLoad = vi.fn(async () => ({ checkCommand: "go test ./...", checkTimeoutSeconds: "120", worktreeSetup: "", unsandboxed: false }));
    const onSave = vi.fn();
    const el = topBar(vi.fn(), { wsId: "ws1", onLoad, onSave });
    expect(el.querySelector<HTMLInputElement>('[data-testid="settings-check"]')!.disabled).toBe(true);
    await openSettings(el);
    expect(onLoad).toHaveBeenCalledWith("ws1");
    expect(value(el, "settings-check")).toBe("go test ./...");
    expect(value(el, "settings-check-timeout")).toBe("120");
    type(el, "settings-check", "npm test");
    type(el, "settings-setup", "npm ci");
    act(() => el.querySelector('[data-testid="workspace-settings-form"]')!.dispatchEvent(new Event("submit", { bubbles: true, cancelable: true })));
    expect(onSave).toHaveBeenCalledWith(
      { workspaceId: "ws1", checkCommand: "npm test", checkTimeoutSeconds: 120, worktreeSetup: "npm ci", commandSandbox: "AGENT" },
      expect.any(Function),
    );
  });
  it("says what running unsandboxed allows, and sends NONE once ticked", async () => {
    const onSave = vi.fn();
    const el = topBar(vi.fn(), { wsId: "ws1", onLoad: async () => ({ checkCommand: "make check", checkTimeoutSeconds: "", worktreeSetup: "", unsandboxed: false }), onSave });
    await openSettings(el);
    const help = () => el.querySelector('[data-testid="settings-unsandboxed-help"]')!.textContent ?? "";
    expect(help()).toMatch(/no more power than the branch's agent/);
    const box = el.querySelector<HTMLInputElement>('[data-testid="settings-unsandboxed"]')!;
    act(() => box.click());
    expect(help()).toMatch(/read and change all your files, use the network/);
    act(() => el.querySelector('[data-testid="workspace-settings-form"]')!.dispatchEvent(new Event("submit", { bubbles: true, cancelable: true })));
    expect(onSave).toHaveBeenCalledWith(expect.objectContaining({ commandSandbox: "NONE" }), expect.any(Function));
  });
  it("sends an emptied field to clear it, and an empty time limit as the default (0)", async () => {
    const onSave = vi.fn();
    const el = topBar(vi.fn(), { wsId: "ws1", onLoad: async () => ({ checkCommand: "make check", checkTimeoutSeconds: "30", worktreeSetup: "make deps", unsandboxed: true }), onSave });
    await openSettings(el);
    type(el, "settings-check", " ");
    type(el, "settings-check-timeout", "");
    type(el, "settings-setup", "");
    act(() => el.querySelector('[data-testid="workspace-settings-form"]')!.dispatchEvent(new Event("submit", { bubbles: true, cancelable: true })));
    expect(onSave).toHaveBeenCalledWith({ workspaceId: "ws1", checkCommand: "", checkTimeoutSeconds: 0, worktreeSetup: "", commandSandbox: "NONE" }, expect.any(Function));
  });
});

describe("the top bar's forms", () => {
  it("one open at a time; Escape closes the open one and focuses its summary", async () => {
    const el = topBar(vi.fn(), { wsId: "ws1", onLoad: async () => ({ checkCommand: "", checkTimeoutSeconds: "", worktreeSetup: "", unsandboxed: false }) });
    const create = el.querySelector('[data-testid="new-workspace"]')!.closest("details")!;
    const settings = el.querySelector('[data-testid="workspace-settings"]')!.closest("details")!;
    act(() => {
      create.open = true;
      create.dispatchEvent(new Event("toggle"));
    });
    await openSettings(el);
    expect(settings.open).toBe(true);
    expect(create.open).toBe(false);
    act(() => el.querySelector('[data-testid="settings-check"]')!.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true })));
    expect(settings.open).toBe(false);
    expect(document.activeElement).toBe(el.querySelector('[data-testid="workspace-settings"]'));
  });
});

describe("workspaceInput", () => {
  it("trims the commands and reads the seconds as a number", () => {
    expect(workspaceInput({ name: "a", rootPath: "/a", checkCommand: " npm test ", checkTimeoutSeconds: " 30 ", worktreeSetup: " npm ci " })).toEqual({
      name: "a",
      rootPath: "/a",
      checkCommand: "npm test",
      checkTimeoutSeconds: 30,
      worktreeSetup: "npm ci",
    });
    expect(workspaceInput({ name: "a", rootPath: "/a", checkCommand: "", checkTimeoutSeconds: "", worktreeSetup: "" })).toEqual({ name: "a", rootPath: "/a" });
  });
});

describe("settingsFields", () => {
  it("shows the server's values, the default time limit as empty", () => {
    expect(settingsFields({ checkCommand: null, checkTimeoutSeconds: 600, worktreeSetup: null, commandSandbox: "AGENT" })).toEqual({
      checkCommand: "",
      checkTimeoutSeconds: "",
      worktreeSetup: "",
      unsandboxed: false,
    });
    expect(settingsFields({ checkCommand: "go test", checkTimeoutSeconds: 90, worktreeSetup: "go mod download", commandSandbox: "NONE" })).toEqual({
      checkCommand: "go test",
      checkTimeoutSeconds: "90",
      worktreeSetup: "go mod download",
      unsandboxed: true,
    });
  });
  it("round-trips through settingsInput", () => {
    expect(settingsInput("w", settingsFields({ checkCommand: "go test", checkTimeoutSeconds: 600, worktreeSetup: null, commandSandbox: "AGENT" }))).toEqual({
      workspaceId: "w",
      checkCommand: "go test",
      checkTimeoutSeconds: 0,
      worktreeSetup: "",
      commandSandbox: "AGENT",
    });
    expect(settingsInput("w", settingsFields({ checkCommand: null, checkTimeoutSeconds: 600, worktreeSetup: null, commandSandbox: "NONE" })).commandSandbox).toBe(
      "NONE",
    );
  });
});

describe("the live-updates badge", () => {
  it("says there is nothing to follow before any workspace, offline only when the socket closed", () => {
    expect(connText("idle")).toBe("no workspace yet");
    expect(connText("closed")).toBe("offline");
    expect(connText("live")).toBe("live");
    expect(connText("reconnecting")).toBe("reconnecting…");
  });
});
