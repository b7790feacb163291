// @vitest-environment happy-dom
// The Explore dialog and the exploration view (issue 32) as a person uses
// them: clicks and typing in a DOM, React running for real.
import { Theme } from "@radix-ui/themes";
import { act, type ReactElement } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiError } from "./client";
import { ExplorationView } from "./Exploration";
import { ExploreDialog } from "./ExploreDialog";
import { typeInto } from "./typeInto";
import type { ExplorationBranchFieldsFragment, ExplorationFieldsFragment, ExploreSessionInput } from "./gql/graphql";

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

const button = (el: ParentNode, name: string) => [...el.querySelectorAll("button")].find((b) => b.textContent?.trim() === name)!;
const parent = { model: "m", reasoningEffort: "", permissionModeId: "workspace-write", planMode: false };
const target = { workspaceId: "w", agentSessionId: "s", lastTurnId: "t1", workspaceCheck: "" };

function dialog(onStart: (i: ExploreSessionInput) => Promise<ApiError | null>, onClose = () => {}) {
  let n = 0;
  return mount(
    <ExploreDialog parent={parent} models={[]} busy={false} from={{ turnId: "t1", text: "add login" }} target={target} checkTimeoutSeconds={600} requestId={() => `req-${++n}`} onStart={onStart} onClose={onClose} />,
  );
}

describe("ExploreDialog, clicked", () => {
  it("is a dialog named Explore with two branches, a and b; Remove is disabled at two", () => {
    const el = dialog(async () => null);
    const d = el.querySelector('[role="dialog"]')!;
    expect(document.getElementById(d.getAttribute("aria-labelledby")!)?.textContent).toBe("Explore");
    const names = [...el.querySelectorAll<HTMLInputElement>('[data-testid="explore-branch"] input[aria-label="Name"]')].map((i) => i.value);
    expect(names).toEqual(["a", "b"]);
    expect([...el.querySelectorAll<HTMLButtonElement>('[data-testid="explore-remove"]')].every((b) => b.disabled)).toBe(true);
  });
  it("Add branch up to eight, then disabled; Remove down to two", () => {
    const el = dialog(async () => null);
    for (let i = 0; i < 6; i++) act(() => button(el, "Add branch").click());
    expect(el.querySelectorAll('[data-testid="explore-branch"]')).toHaveLength(8);
    expect(button(el, "Add branch").disabled).toBe(true);
    for (let i = 0; i < 6; i++) act(() => el.querySelector<HTMLButtonElement>('[data-testid="explore-remove"]')!.click());
    expect(el.querySelectorAll('[data-testid="explore-branch"]')).toHaveLength(2);
    expect(button(el, "Add branch").disabled).toBe(false);
    // The first six were removed: g and h are left.
    expect([...el.querySelectorAll<HTMLInputElement>('input[aria-label="Name"]')].map((i) => i.value)).toEqual(["g", "h"]);
  });
  it("Start is disabled until every branch has a prompt; then sends the turn, the models, the check and a requestId", async () => {
    const onStart = vi.fn<(i: ExploreSessionInput) => Promise<ApiError | null>>().mockResolvedValue(null);
    const el = dialog(onStart);
    expect(button(el, "Start").disabled).toBe(true);
    expect(el.querySelector('[data-testid="explore-prompt-problem"]')?.textContent).toContain("branches a, b");
    typeInto(el.querySelector<HTMLTextAreaElement>('textarea[aria-label="Prompt"]')!, "write check.sh");
    typeInto(el.querySelector<HTMLInputElement>('[data-testid="explore-0-model"]')!, "mock-fail");
    typeInto(el.querySelector<HTMLInputElement>('[data-testid="explore-1-model"]')!, "mock-pass");
    typeInto(el.querySelector<HTMLInputElement>('input[aria-label="Check command"]')!, "sh check.sh");
    await act(async () => button(el, "Start").click());
    expect(onStart).toHaveBeenCalledWith({
      workspaceId: "w",
      agentSessionId: "s",
      lastTurnId: "t1",
      requestId: "req-1",
      prompt: "write check.sh",
      checkCommand: "sh check.sh",
      branches: [
        { name: "a", settings: { model: "mock-fail" } },
        { name: "b", settings: { model: "mock-pass" } },
      ],
    });
  });
  it("a refusal shows its code, keeps what was typed, and Start again with the same input sends the same requestId", async () => {
    const onStart = vi.fn<(i: ExploreSessionInput) => Promise<ApiError | null>>().mockResolvedValue(new ApiError("agent.fork_session_not_idle", "the session is working"));
    const el = dialog(onStart);
    typeInto(el.querySelector<HTMLTextAreaElement>('textarea[aria-label="Prompt"]')!, "try");
    await act(async () => button(el, "Start").click());
    const alert = el.querySelector('[role="alert"][data-testid="explore-error"]')!;
    expect(alert.querySelector("code")?.textContent).toBe("agent.fork_session_not_idle");
    expect(el.querySelector<HTMLTextAreaElement>('textarea[aria-label="Prompt"]')!.value).toBe("try");
    await act(async () => button(el, "Start").click());
    expect(onStart.mock.calls[1][0].requestId).toBe(onStart.mock.calls[0][0].requestId);
    typeInto(el.querySelector<HTMLTextAreaElement>('textarea[aria-label="Prompt"]')!, "try harder");
    await act(async () => button(el, "Start").click());
    expect(onStart.mock.calls[2][0].requestId).not.toBe(onStart.mock.calls[0][0].requestId);
  });
  it("a bad branch name is said at once and Start is disabled", () => {
    const el = dialog(async () => null);
    typeInto(el.querySelector<HTMLTextAreaElement>('textarea[aria-label="Prompt"]')!, "try");
    typeInto(el.querySelector<HTMLInputElement>('[data-testid="explore-1-name"]')!, "a");
    expect(el.querySelectorAll('[data-testid="explore-name-problem"]')).toHaveLength(2);
    expect(button(el, "Start").disabled).toBe(true);
  });
  it("Escape closes it", () => {
    const onClose = vi.fn();
    const el = dialog(async () => null, onClose);
    act(() => el.querySelector('[role="dialog"]')!.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true })));
    expect(onClose).toHaveBeenCalled();
  });
});

describe("ExploreDialog, by keyboard", () => {
  // A page with the button that opens the dialog, and the dialog when open.
  function Page({ open, withOpener = true, onFocusLost }: { open: boolean; withOpener?: boolean; onFocusLost?: () => void }) {
    return (
      <>
        {withOpener && <button data-testid="opener">Explore from here</button>}
        {open && (
          <ExploreDialog parent={parent} models={[]} busy={false} from={{ turnId: "t1", text: "" }} target={target} checkTimeoutSeconds={600} requestId={() => "r"} onStart={async () => null} onClose={() => {}} onFocusLost={onFocusLost} />
        )}
      </>
    );
  }
  function render(el: ReactElement) {
    act(() => root!.render(<Theme>{el}</Theme>));
  }
  it("takes focus (its Prompt) and gives it back to what opened it when it closes", () => {
    const el = mount(<Page open={false} />);
    const opener = el.querySelector<HTMLButtonElement>('[data-testid="opener"]')!;
    opener.focus();
    render(<Page open />);
    expect(document.activeElement).toBe(el.querySelector('textarea[aria-label="Prompt"]'));
    render(<Page open={false} />);
    expect(document.activeElement).toBe(opener);
  });
  it("when what opened it is gone, focus goes where onFocusLost says", () => {
    const onFocusLost = vi.fn();
    const el = mount(<Page open={false} onFocusLost={onFocusLost} />);
    el.querySelector<HTMLButtonElement>('[data-testid="opener"]')!.focus();
    render(<Page open onFocusLost={onFocusLost} />);
    render(<Page open withOpener={false} onFocusLost={onFocusLost} />);
    expect(onFocusLost).not.toHaveBeenCalled();
    render(<Page open={false} withOpener={false} onFocusLost={onFocusLost} />);
    expect(onFocusLost).toHaveBeenCalledTimes(1);
  });
  it("the 8th branch's Name takes focus, Add branch being disabled then", () => {
    const el = dialog(async () => null);
    for (let i = 0; i < 6; i++) act(() => button(el, "Add branch").click());
    expect(button(el, "Add branch").disabled).toBe(true);
    expect(document.activeElement).toBe(el.querySelector('[data-testid="explore-7-name"]'));
  });
});

const branch = (name: string, more: Partial<ExplorationBranchFieldsFragment> = {}): ExplorationBranchFieldsFragment => ({
  name,
  state: "IDLE",
  errorCode: null,
  errorMessage: null,
  queuePosition: null,
  lastTurnStatus: "COMPLETED",
  session: { id: `s-${name}`, displayTitle: name, settings: { model: null, reasoningEffort: null, permissionModeId: null } },
  historySummarized: false,
  prompt: "write check.sh",
  rank: null,
  check: null,
  filesChanged: 1,
  linesAdded: 1,
  linesDeleted: 0,
  tokensUsed: 100,
  durationMs: 2000,
  winner: false,
  appliedAt: null,
  toldAt: null,
  summary: null,
  summaryState: null,
  review: null,
  ...more,
});
const check = (state: "PASSED" | "FAILED", exitCode: number, output: string) => ({ id: `c-${state}`, agentSessionId: "", turnId: "", state, exitCode, durationMs: 30, output, outputTruncated: false });

function exploration(winner: string | null): ExplorationFieldsFragment {
  const a = branch("a", { rank: 2, check: check("FAILED", 3, "broken"), winner: winner === "a" });
  const b = branch("b", { rank: 1, check: check("PASSED", 0, ""), winner: winner === "b" });
  const c = branch("c", { state: "QUEUED", queuePosition: 2 });
  return {
    id: "x",
    agentSessionId: "s",
    lastTurnId: "t1",
    prompt: "write check.sh",
    checkCommand: "sh check.sh",
    checkTimeoutSeconds: 600,
    state: "RUNNING",
    branches: [a, b, c],
    ranking: [{ name: "b" }, { name: "a" }, { name: "c" }],
    winner: winner ? { name: winner } : null,
    stoppedAt: null,
    createdAt: "",
  };
}

function view(x: ExplorationFieldsFragment, more: Partial<Parameters<typeof ExplorationView>[0]> = {}) {
  return mount(
    <ExplorationView
      wsId="w"
      x={x}
      busy={false}
      onOpen={() => {}}
      onCompare={() => {}}
      onMarkWinner={() => {}}
      onReview={() => {}}
      onApply={async () => null}
      onArchiveOthers={async () => null}
      onStop={async () => null}
      onClose={() => {}}
      {...more}
    />,
  );
}

describe("ExplorationView", () => {
  it("a region named Exploration with one group per branch, best first, each with its check and state", () => {
    const el = view(exploration(null));
    const region = el.querySelector('section[aria-label="Exploration"]')!;
    const groups = [...region.querySelectorAll<HTMLElement>('[role="group"]')];
    expect(groups.map((g) => g.getAttribute("aria-label"))).toEqual(["b", "a", "c"]);
    expect(groups.map((g) => g.dataset.branchName)).toEqual(["b", "a", "c"]);
    expect(groups[0].querySelector('[data-testid="branch-check"] summary')?.textContent).toContain("Check passed");
    expect(groups[1].querySelector('[data-testid="branch-check"] summary')?.textContent).toContain("Check failed");
    // The output behind a disclosure.
    expect(groups[1].querySelector("details pre")?.textContent).toBe("broken");
    expect(groups[2].querySelector('[data-testid="branch-state"]')?.textContent).toBe("Queued (2nd in line)");
    expect(groups[0].querySelector('[data-testid="branch-change"]')?.textContent).toBe("1 file, +1 −0");
  });
  it("Stop all while something runs: it stops, and says what it interrupted and what it could not", async () => {
    const onStop = vi.fn(async () => ({ interrupted: ["a"], failed: [{ branchName: "b", errorCode: "agent.session_not_busy", errorMessage: "not running" }] }));
    const el = view(exploration(null), { onStop });
    await act(async () => button(el, "Stop all").click());
    expect(onStop).toHaveBeenCalledTimes(1);
    const outcome = el.querySelector('[role="status"][data-testid="stop-outcome"]')!.textContent;
    expect(outcome).toContain("interrupted a");
    expect(outcome).toContain("Could not interrupt b");
  });
  it("no Stop all once settled; a stopped branch says it never started", () => {
    const x = { ...exploration(null), state: "SETTLED" as const, stoppedAt: "2026-12-07T09:00:00Z" };
    x.branches = x.branches.map((b) => (b.name === "c" ? { ...b, state: "STOPPED" as const, queuePosition: null } : b));
    const el = view(x);
    expect([...el.querySelectorAll("button")].some((b) => b.textContent?.trim() === "Stop all")).toBe(false);
    expect(el.querySelector('[role="group"][aria-label="c"] [data-testid="branch-state"]')?.textContent).toBe("Stopped before it started");
  });
  it("Archive the others is disabled, with why, until a winner is marked", () => {
    expect(button(view(exploration(null)), "Archive the others").disabled).toBe(true);
    expect(document.querySelector('[data-testid="archive-others-why"]')?.textContent).toContain("Mark a winner");
    act(() => root?.unmount());
    expect(button(view(exploration("b")), "Archive the others").disabled).toBe(false);
  });
  it("Mark winner, then Apply to parent with and tell the parent, on that branch", async () => {
    const onMarkWinner = vi.fn();
    const onApply = vi.fn(async () => ({ kind: "applied" as const, files: 1, told: true, alreadyTold: false, uncertain: false }));
    const el = view(exploration(null), { onMarkWinner, onApply });
    const b = el.querySelector<HTMLElement>('[role="group"][aria-label="b"]')!;
    act(() => button(b, "Mark winner").click());
    expect(onMarkWinner).toHaveBeenCalledWith("b");
    // Telling the parent is part of the action: on unless turned off.
    expect([...b.querySelectorAll("label")].find((l) => l.textContent?.trim() === "and tell the parent")!.querySelector("input")!.checked).toBe(true);
    await act(async () => button(b, "Apply to parent").click());
    expect(onApply).toHaveBeenCalledWith("b", true, false);
    expect(b.querySelector('[role="status"][data-testid="branch-apply-outcome"]')?.textContent).toContain("The parent was told");
    // Once applied it says so, once.
    expect(button(b, "Applied")).toBeTruthy();
    expect(b.querySelector('[data-testid="branch-brought-back"]')).toBeNull();
  });
  it("Apply is deliberate: the recommended branch's is primary, a failed one asks first, and tell can be turned off", async () => {
    const x = exploration(null); // b passed (rank 1), a's check failed
    const onApply = vi.fn(async () => ({ kind: "applied" as const, files: 1, told: false, alreadyTold: false, uncertain: false }));
    const el = view(x, { onApply });
    const a = el.querySelector<HTMLElement>('[role="group"][aria-label="a"]')!;
    const b = el.querySelector<HTMLElement>('[role="group"][aria-label="b"]')!;
    expect(b.querySelector('[data-testid="apply-branch"]')?.getAttribute("data-recommended")).toBe("true");
    expect(a.querySelector('[data-testid="apply-branch"]')?.getAttribute("data-recommended")).toBeNull();
    act(() => button(a, "Apply to parent").click());
    expect(onApply).not.toHaveBeenCalled();
    expect(a.querySelector('[role="alertdialog"]')?.textContent).toContain("check failed");
    act(() => [...a.querySelectorAll("label")].find((l) => l.textContent?.trim() === "and tell the parent")!.querySelector("input")!.click());
    await act(async () => button(a, "Apply anyway").click());
    expect(onApply).toHaveBeenCalledWith("a", false, false);
    expect(a.querySelector('[role="alertdialog"]')).toBeNull();
  });
  it("Review asks for the branch's review; a done review shows its text, a running one disables Review", () => {
    const x = exploration(null);
    x.branches = x.branches.map((b) =>
      b.name === "a" ? { ...b, review: { state: "DONE" as const, text: "FINDINGS", error: null } } : b.name === "b" ? { ...b, review: { state: "RUNNING" as const, text: null, error: null } } : b,
    );
    const onReview = vi.fn();
    const el = view(x, { onReview });
    const a = el.querySelector<HTMLElement>('[role="group"][aria-label="a"]')!;
    const b = el.querySelector<HTMLElement>('[role="group"][aria-label="b"]')!;
    expect(a.querySelector('[data-testid="branch-review"] pre')?.textContent).toBe("FINDINGS");
    expect(b.querySelector('[data-testid="branch-review"]')?.textContent).toContain("reviewing");
    expect(button(b, "Review").disabled).toBe(true);
    act(() => button(a, "Review").click());
    expect(onReview).toHaveBeenCalledWith("a");
  });
  it("an uncertain telling says so, and Tell the parent again tells it knowingly", async () => {
    const x = exploration(null);
    x.branches = x.branches.map((b) => (b.name === "a" ? { ...b, appliedAt: "t", summary: "S", summaryState: "UNCERTAIN" } : b));
    const onApply = vi.fn(async () => ({ kind: "nothing" as const, told: true, alreadyTold: false, uncertain: false }));
    const el = view(x, { onApply });
    const a = el.querySelector<HTMLElement>('[role="group"][aria-label="a"]')!;
    expect(a.querySelector('[role="status"][data-testid="branch-tell-uncertain"]')?.textContent).toContain("may or may not have it");
    expect(el.querySelector('[role="group"][aria-label="b"] [data-testid="branch-tell-uncertain"]')).toBeNull();
    await act(async () => button(a, "Tell the parent again").click());
    expect(onApply).toHaveBeenCalledWith("a", true, true);
  });
  it("while busy the branch's actions say disabled and ignore presses, but keep focus", () => {
    const onMarkWinner = vi.fn();
    const onApply = vi.fn(async () => null);
    const el = view(exploration(null), { busy: true, onMarkWinner, onApply });
    const b = el.querySelector<HTMLElement>('[role="group"][aria-label="b"]')!;
    for (const name of ["Mark winner", "Apply to parent"]) {
      const btn = button(b, name);
      expect(btn.disabled).toBe(false);
      expect(btn.getAttribute("aria-disabled")).toBe("true");
      btn.focus();
      act(() => btn.click());
      expect(document.activeElement).toBe(btn);
    }
    expect(onMarkWinner).not.toHaveBeenCalled();
    expect(onApply).not.toHaveBeenCalled();
  });
  it("a queued branch cannot be applied yet", () => {
    const el = view(exploration(null));
    expect(button(el.querySelector('[role="group"][aria-label="c"]')!, "Apply to parent").disabled).toBe(true);
  });
  it("Compare puts the best two side by side, or the two chosen", () => {
    const onCompare = vi.fn();
    const el = view(exploration(null), { onCompare });
    const region = el.querySelector('[data-testid="explore-compare"]')!;
    act(() => button(region, "Compare").click());
    expect(onCompare).toHaveBeenLastCalledWith("s-b", "s-a");
    const second = region.querySelector<HTMLSelectElement>('select[aria-label="Second branch"]')!;
    act(() => {
      second.value = "s-c";
      second.dispatchEvent(new Event("change", { bubbles: true }));
    });
    act(() => button(region, "Compare").click());
    expect(onCompare).toHaveBeenLastCalledWith("s-b", "s-c");
  });
});
