// Two sessions of one tree side by side: the turns they share (their common
// prefix) collapsed, then each one's own continuation from the fork point.
import { Button, Flex, Heading, Link, Popover, Text } from "@radix-ui/themes";
import { useState } from "react";
import { FileList } from "./FileList";
import { DiffPanel } from "./DiffPanel";
import { MessageView } from "./MessageView";
import { StatusBadge } from "./Status";
import type { ComparisonFragment, CompareTurnFragment } from "./gql/graphql";
import { totals, totalsText } from "./state/code";

function Turns({ turns, empty }: { turns: CompareTurnFragment[]; empty: string }) {
  if (turns.length === 0) return <Text className="muted" size="2">{empty}</Text>;
  return (
    <ol className="cmp-turns">
      {turns.map((t) => (
        <li key={t.id} className="turn" data-testid="turn" data-turn-id={t.id} data-status={t.status}>
          <div className="turn-head">
            <StatusBadge status={t.status} />
          </div>
          {t.messages.map((m) => (
            <MessageView key={m.id} m={m} />
          ))}
        </li>
      ))}
    </ol>
  );
}

interface Props {
  cmp: ComparisonFragment;
  onOpen: (id: string) => void;
  onClose: () => void;
}

export function CompareView({ cmp, onOpen, onClose }: Props) {
  return (
    <section className="compare" data-testid="comparison" data-a={cmp.a.id} data-b={cmp.b.id} aria-label="Comparison">
      <header className="session-head">
        <Heading as="h1" size="4">
          Comparing {cmp.a.displayTitle} and {cmp.b.displayTitle}
        </Heading>
        <Button variant="soft" onClick={onClose} data-testid="close-compare">
          Close comparison
        </Button>
      </header>
      <div className="compare-body">
        <details className="shared" data-testid="shared-prefix" data-count={cmp.sharedTurnCount}>
          <summary>
            {cmp.sharedTurnCount === 0
              ? "No shared turns"
              : `${cmp.sharedTurnCount} shared turn${cmp.sharedTurnCount === 1 ? "" : "s"}`}
            {cmp.commonAncestor ? ` — common ancestor: ${cmp.commonAncestor.displayTitle}` : " — not in one tree"}
          </summary>
          <Turns turns={cmp.sharedTurns} empty="Nothing in common." />
        </details>
        {cmp.code && <CodeComparison cmp={cmp} code={cmp.code} />}
        <div className="compare-columns">
          {(
            [
              ["a", cmp.a, cmp.aOnly],
              ["b", cmp.b, cmp.bOnly],
            ] as const
          ).map(([side, s, turns]) => (
            <div key={side} className="compare-column" data-testid={`compare-${side}`} data-session-id={s.id}>
              <div className="compare-title">
                <Link
                  weight="bold"
                  href={`#s=${encodeURIComponent(s.id)}`}
                  onClick={(e) => {
                    e.preventDefault();
                    onOpen(s.id);
                  }}
                >
                  {s.displayTitle}
                </Link>{" "}
                <StatusBadge status={s.status} />
              </div>
              <Turns turns={[...turns]} empty="No turns after the fork point." />
            </div>
          ))}
        </div>
      </div>
    </section>
  );
}

// CodeComparison: the Code region of a comparison of two sessions with
// code (issue 24): each side's files changed since their fork point, and
// the diff from a's files to b's.
function CodeComparison({ cmp, code }: { cmp: ComparisonFragment; code: NonNullable<ComparisonFragment["code"]> }) {
  const sides = [
    ["a", cmp.a, code.aChanges],
    ["b", cmp.b, code.bChanges],
  ] as const;
  return (
    <section className="compare-code" aria-label="Code" data-testid="compare-code">
      <Heading as="h2" size="3">
        Code
      </Heading>
      <Text as="p" size="1" className="muted">
        {code.base ? `Each side's files against their fork point (${code.base.commit.slice(0, 10)}).` : "Each side's files against their fork point."}
      </Text>
      <div className="compare-columns">
        {sides.map(([side, s, diff]) => (
          <div key={side} className="compare-column" data-testid={`code-${side}`} data-session-id={s.id}>
            <div className="compare-title">
              {s.displayTitle}: <span className="small">{diff.files.length === 0 ? "no changes" : totalsText(totals(diff.files))}</span>
            </div>
            {diff.files.length > 0 && <FileList files={diff.files} label={`Files ${s.displayTitle} changed`} />}
          </div>
        ))}
      </div>
      <details className="code-diff-details" open={code.diff.files.length > 0 && code.diff.files.length <= 20}>
        <summary data-testid="compare-diff-summary">
          {code.diff.files.length === 0
            ? `${cmp.a.displayTitle} and ${cmp.b.displayTitle} have the same files`
            : `Diff from ${cmp.a.displayTitle} to ${cmp.b.displayTitle}: ${totalsText(totals(code.diff.files))}`}
        </summary>
        {code.diff.files.length > 0 && <DiffPanel patch={code.diff.patch} truncated={code.diff.truncated} label={`Diff from ${cmp.a.displayTitle} to ${cmp.b.displayTitle}`} />}
      </details>
    </section>
  );
}

// ComparePicker: the "Compare" button, then which session of the same
// tree to put beside the shown one.
export function ComparePicker({ options, busy, onCompare }: { options: { id: string; displayTitle: string }[]; busy: boolean; onCompare: (id: string) => void }) {
  const [open, setOpen] = useState(false);
  const [pick, setPick] = useState<string>("");
  const value = options.some((o) => o.id === pick) ? pick : (options[0]?.id ?? "");
  return (
    <Popover.Root open={open} onOpenChange={setOpen} modal={false}>
      <Popover.Trigger>
        <Button variant="soft" disabled={busy || options.length === 0} data-testid="compare" title="Compare this session with another of its fork tree">
          Compare
        </Button>
      </Popover.Trigger>
      <Popover.Content size="2" maxWidth="24rem">
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (value) {
              setOpen(false);
              onCompare(value);
            }
          }}
        >
          <Flex direction="column" gap="2">
            <label className="field">
              <Text size="2">Compare with</Text>
              <select data-testid="compare-with" value={value} onChange={(e) => setPick(e.target.value)}>
                {options.map((o) => (
                  <option key={o.id} value={o.id}>
                    {o.displayTitle}
                  </option>
                ))}
              </select>
            </label>
            <Flex justify="end">
              <Button type="submit" data-testid="compare-go">
                Show side by side
              </Button>
            </Flex>
          </Flex>
        </form>
      </Popover.Content>
    </Popover.Root>
  );
}
