// Two sessions of one tree side by side: the turns they share (their common
// prefix) collapsed, then each one's own continuation from the fork point.
import { Button, Flex, Heading, Link, Popover, Text } from "@radix-ui/themes";
import { useState } from "react";
import { MessageView } from "./MessageView";
import { StatusBadge } from "./Status";
import type { ComparisonFragment, CompareTurnFragment } from "./gql/graphql";

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
