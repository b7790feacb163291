// The conversation of one session: its loaded turns (the latest page, then
// earlier pages as the person scrolls back or asks), oldest first, each with its
// messages, the files it changed, its "Fork from here" button (which opens
// the fork dialog) and "Explore from here" (the Explore dialog, issue 32),
// and the forks made from it; in a
// child, the inherited turns are set apart by a divider naming the parent.
import { Button, Link, Text } from "@radix-ui/themes";
import { Fragment, memo, useEffect, useLayoutEffect, useRef } from "react";
import { ApprovalPrompt } from "./Approvals";
import { FileList } from "./FileList";
import { ForkIcon } from "./Icons";
import { MessageView } from "./MessageView";
import { StatusBadge } from "./Status";
import type { ApprovalDecision, ApprovalFieldsFragment, ForkChildFragment, MessageFieldsFragment, SessionHeadFragment, TurnFieldsFragment } from "./gql/graphql";

interface Props {
  wsId: string;
  head: SessionHeadFragment;
  turns: TurnFieldsFragment[];
  messages: MessageFieldsFragment[];
  streams: ReadonlyMap<string, string>;
  // Why Codex retries a running turn, by turn id (TURN_RETRYING).
  retries: ReadonlyMap<string, string>;
  hasEarlier: boolean;
  loadingEarlier: boolean;
  onLoadEarlier: () => void;
  inherited: Set<string>;
  marks: Map<string, ForkChildFragment[]>;
  busy: boolean;
  // Why the session's commands cannot run now (its owner instance is
  // down), or null.
  unavailable?: string | null;
  onForkFrom: (turnId: string) => void;
  // Why the session cannot be explored (not in a git repository), or
  // null.
  exploreBlocked: string | null;
  onExploreFrom: (turnId: string) => void;
  onOpen: (id: string) => void;
  approvals: ApprovalFieldsFragment[];
  onDecide: (approvalId: string, decision: ApprovalDecision) => void;
}

// Memoized: the page re-renders on every change of the session list (a
// burst of activity at 1,000 sessions), which leaves the conversation as it
// was.
export const Conversation = memo(function Conversation(p: Props) {
  const listRef = useRef<HTMLOListElement>(null);
  const topRef = useRef<HTMLLIElement>(null);
  const atBottom = useRef(true);
  const prevHeight = useRef(0);
  const prevFirst = useRef<string | undefined>(undefined);

  const byTurn = new Map<string, MessageFieldsFragment[]>();
  for (const m of p.messages) {
    const list = byTurn.get(m.turnId) ?? [];
    list.push(m);
    byTurn.set(m.turnId, list);
  }
  // The loaded turns: the latest page, and earlier pages once asked for.
  const shown = p.turns;
  const lastInherited = shown.reduce((acc, t, i) => (p.inherited.has(t.id) ? i : acc), -1);
  const parentTitle = p.head.parent?.displayTitle ?? "the parent";

  // Keep the view at the bottom while new text arrives, and in place when
  // earlier turns are put above.
  useLayoutEffect(() => {
    const el = listRef.current;
    if (!el) return;
    const firstId = p.turns[0]?.id;
    if (prevFirst.current && firstId !== prevFirst.current && !atBottom.current) {
      el.scrollTop += el.scrollHeight - prevHeight.current;
    } else if (atBottom.current) {
      el.scrollTop = el.scrollHeight;
    }
    prevHeight.current = el.scrollHeight;
    prevFirst.current = firstId;
    // Only when what it shows changed: reading scrollHeight lays the whole
    // page out.
  }, [p.turns, p.messages, p.streams, p.retries, p.approvals, p.inherited, p.marks, p.hasEarlier, p.loadingEarlier]);

  useEffect(() => {
    const top = topRef.current;
    if (!top || !p.hasEarlier) return;
    const io = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) p.onLoadEarlier();
    });
    io.observe(top);
    return () => io.disconnect();
  }, [p.hasEarlier, p.onLoadEarlier]);

  return (
    <ol
      ref={listRef}
      className="conversation"
      data-testid="conversation"
      aria-label="Conversation"
      onScroll={(e) => {
        const el = e.currentTarget;
        atBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < 60;
      }}
    >
      {p.hasEarlier && (
        <li ref={topRef} className="earlier">
          <Button
            variant="ghost"
            size="1"
            onClick={p.onLoadEarlier}
            aria-disabled={p.loadingEarlier}
            aria-busy={p.loadingEarlier}
            data-testid="load-earlier"
          >
            {p.loadingEarlier ? "Loading earlier turns…" : "Load earlier turns"}
          </Button>
        </li>
      )}

      {shown.length === 0 && (
        <li className="empty muted">
          <Text size="2">No messages yet. Say what the agent should do.</Text>
        </li>
      )}
      {shown.map((t, i) => {
        const msgs = byTurn.get(t.id) ?? [];
        const marks = p.marks.get(t.id) ?? [];
        const inherited = p.inherited.has(t.id);
        return (
          <Fragment key={t.id}>
            <li className={inherited ? "turn inherited" : "turn"} data-testid="turn" data-turn-id={t.id} data-status={t.status} data-inherited={inherited ? "true" : undefined}>
              <div className="turn-head">
                <StatusBadge status={t.status} />
                {inherited && (
                  <Text size="1" className="muted">
                    from {parentTitle}
                  </Text>
                )}
                <span className="spacer" />
                <Button
                  size="1"
                  variant="soft"
                  data-testid="fork-from-here"
                  data-turn-id={t.id}
                  disabled={t.status !== "COMPLETED" || p.busy || !!p.unavailable}
                  title={
                    p.unavailable
                      ? `Unavailable: ${p.unavailable}`
                      : t.status === "COMPLETED"
                        ? "Fork a new session with the conversation up to this turn"
                        : "Only a completed turn can be forked from"
                  }
                  onClick={() => p.onForkFrom(t.id)}
                >
                  Fork from here
                </Button>
                <Button
                  size="1"
                  variant="soft"
                  data-testid="explore-from-here"
                  data-turn-id={t.id}
                  disabled={t.status !== "COMPLETED" || p.busy || !!p.unavailable || !!p.exploreBlocked}
                  title={
                    p.unavailable
                      ? `Unavailable: ${p.unavailable}`
                      : p.exploreBlocked
                        ? p.exploreBlocked
                        : t.status === "COMPLETED"
                          ? "Try several approaches from this turn at once, each in its own worktree, checked and ranked"
                          : "Only a completed turn can be explored from"
                  }
                  onClick={() => p.onExploreFrom(t.id)}
                >
                  Explore from here
                </Button>
              </div>
              {msgs.map((m) => (
                <MessageView key={m.id} m={m} streams={p.streams} />
              ))}
              {p.approvals
                .filter((a) => a.turnId === t.id)
                .map((a) => (
                  <ApprovalPrompt key={a.id} a={a} busy={p.busy} onDecide={p.onDecide} />
                ))}
              {t.diff && t.diff.files.length > 0 && (
                <div className="turn-files" data-testid="turn-files">
                  <Text size="1" className="muted">
                    Files this turn changed{t.diff.truncated ? " (cut)" : ""}:
                  </Text>
                  <FileList files={t.diff.files} label="Files this turn changed" />
                </div>
              )}
              {t.status === "IN_PROGRESS" && p.retries.get(t.id) && (
                <div className="turn-retrying" role="status" data-testid="turn-retrying">
                  Codex is retrying: {p.retries.get(t.id)}
                </div>
              )}
              {t.error && (
                <div className="turn-error" role="note" data-testid="turn-error" data-error-code={t.errorCode ?? undefined}>
                  {t.error}
                  {t.errorCode && <code className="code"> ({t.errorCode})</code>}
                </div>
              )}
              {marks.length > 0 && (
                <div className="fork-marker" data-testid="fork-marker">
                  <ForkIcon />
                  <Text size="1">Forked here into </Text>
                  {marks.map((c, j) => (
                    <Fragment key={c.id}>
                      {j > 0 && ", "}
                      <Link
                        size="1"
                        href={`#w=${encodeURIComponent(p.wsId)}&s=${encodeURIComponent(c.id)}`}
                        data-testid="fork-child-link"
                        data-session-id={c.id}
                        onClick={(e) => {
                          e.preventDefault();
                          p.onOpen(c.id);
                        }}
                      >
                        {c.displayTitle}
                        {c.archived ? " (archived)" : ""}
                      </Link>
                    </Fragment>
                  ))}
                </div>
              )}
            </li>
            {i === lastInherited && (
              <li className="fork-divider" data-testid="fork-divider" role="separator" aria-label={`Forked from ${parentTitle}`}>
                <span>
                  Forked from{" "}
                  <Link
                    href={`#w=${encodeURIComponent(p.wsId)}&s=${encodeURIComponent(p.head.parent?.id ?? "")}`}
                    onClick={(e) => {
                      e.preventDefault();
                      if (p.head.parent) p.onOpen(p.head.parent.id);
                    }}
                  >
                    {parentTitle}
                  </Link>{" "}
                  — above: its turns; below: this fork's own
                </span>
              </li>
            )}
          </Fragment>
        );
      })}
      {p.approvals
        .filter((a) => !p.turns.some((t) => t.id === a.turnId))
        .map((a) => (
          <li key={a.id}>
            <ApprovalPrompt a={a} busy={p.busy} onDecide={p.onDecide} />
          </li>
        ))}
    </ol>
  );
});
