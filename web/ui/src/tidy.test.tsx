// @vitest-environment happy-dom
// Deleting a session whose own worktree holds unapplied changes: the
// server's refusal is shown in the confirmation, and a second, explicit
// confirmation deletes with discardChanges.
import { Theme } from "@radix-ui/themes";
import { act } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, describe, expect, it, vi } from "vitest";
import { TidyActions } from "./Tidy";

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

let root: Root | undefined;
afterEach(() => {
  act(() => root?.unmount());
  document.body.innerHTML = "";
});

const q = (sel: string) => document.querySelector<HTMLButtonElement>(sel);

describe("TidyActions delete", () => {
  it("shows why the server refused and deletes with discardChanges only when confirmed again", async () => {
    const onDelete = vi.fn<(discard?: boolean) => Promise<string | null>>().mockResolvedValueOnce("the worktree holds changes never applied: a.go").mockResolvedValueOnce(null);
    const host = document.createElement("div");
    document.body.append(host);
    root = createRoot(host);
    act(() =>
      root!.render(
        <Theme>
          <TidyActions title="T" archived={false} descendants={0} busy={false} onRename={async () => true} onStartRename={() => {}} onArchive={() => {}} onDelete={onDelete} />
        </Theme>,
      ),
    );
    act(() => q('[data-testid="delete"]')!.click());
    expect(q('[data-testid="delete-confirmed"]')).not.toBeNull();
    await act(async () => q('[data-testid="delete-confirmed"]')!.click());
    expect(onDelete).toHaveBeenNthCalledWith(1, false);
    expect(document.querySelector('[data-testid="delete-refused"]')?.textContent).toContain("a.go");
    expect(q('[data-testid="delete-confirmed"]')).toBeNull();
    await act(async () => q('[data-testid="delete-discard"]')!.click());
    expect(onDelete).toHaveBeenNthCalledWith(2, true);
  });
});
