// The exploration view (issue 32): a region named Exploration with one
// group per branch, best first (the server's ranking), side by side (four
// to a row at 1280 px), each with its state, its check (the output behind
// a disclosure), its change size, usage and rank, `Mark winner`, `Apply
// to parent` (with `and tell the parent`) and a link to its session. At
// the top: `Compare` of any two branches (the Compare view, &c= in the
// URL), `Stop all` while something runs (no branch starts after it; running
// turns and checks interrupted) and `Archive the others` (keeps the
// winner). While an action runs
// (busy) the buttons look and say disabled (aria-disabled) and ignore
// presses, but stay focusable: a disabled button loses focus, and a
// keyboard's place with it.
import { Badge, Button, Heading, Link, Text } from "@radix-ui/themes";
import { memo, useCallback, useRef, useState } from "react";
import type { ExplorationBranchFieldsFragment, ExplorationFieldsFragment } from "./gql/graphql";
import {
  applyBlock,
  applyRisk,
  archiveBlock,
  branchApplyText,
  canStop,
  changeText,
  checkDetail,
  checkText,
  comparable,
  noCheckText,
  ranked,
  recommendedBranch,
  settingsText,
  stateText,
  usageText,
  winnerBlock,
  reviewBlock,
  type ArchiveOutcome,
  type BranchApply,
  type StopOutcome,
} from "./state/exploration";

// whileBusy: the props of a control that waits for the running action
// (see the file's comment), or none.
function whileBusy(busy: boolean) {
  return busy ? { "aria-disabled": true, "data-disabled": true } : {};
}

interface Props {
  wsId: string;
  x: ExplorationFieldsFragment;
  busy: boolean;
  onOpen: (sessionId: string) => void;
  onCompare: (a: string, b: string) => void;
  onMarkWinner: (name: string | null) => void;
  onReview: (name: string) => void;
  onApply: (name: string, tell: boolean, again?: boolean) => Promise<BranchApply | null>;
  onArchiveOthers: () => Promise<ArchiveOutcome | null>;
  onStop: () => Promise<StopOutcome | null>;
  onClose: () => void;
}

// Memoized, as its cards: the page re-renders on every list refresh and
// session patch while the branches run; the view only when the
// exploration (or busy) changed. The callbacks it is given may be new on
// every render: the cards get stable ones that call the latest.
export const ExplorationView = memo(function ExplorationView(p: Props) {
  const { x } = p;
  const latest = useRef(p);
  latest.current = p;
  const onOpen = useCallback((id: string) => latest.current.onOpen(id), []);
  const onMarkWinner = useCallback((name: string | null) => latest.current.onMarkWinner(name), []);
  const onReview = useCallback((name: string) => latest.current.onReview(name), []);
  const onApply = useCallback((name: string, tell: boolean, again?: boolean) => latest.current.onApply(name, tell, again), []);
  const [archived, setArchived] = useState<ArchiveOutcome | null>(null);
  const [stopped, setStopped] = useState<StopOutcome | null>(null);
  const block = archiveBlock(x);
  const branches = ranked(x);
  const recommended = recommendedBranch(x);
  return (
    <section className="exploration" aria-label="Exploration" data-testid="exploration" data-exploration-id={x.id} data-state={x.state}>
      <header className="exploration-head">
        <div className="exploration-titles">
          <Heading as="h2" size="3" id="exploration-title" tabIndex={-1} data-testid="exploration-title">
            Exploration: {x.branches.length} branches, {x.stoppedAt && x.state === "SETTLED" ? "stopped" : x.state.toLowerCase()}
          </Heading>
          <Text as="p" size="1" className="muted" data-testid="exploration-check">
            {x.checkCommand ? (
              <>
                Check: <code className="code">{x.checkCommand}</code> (up to {x.checkTimeoutSeconds} s)
              </>
            ) : (
              "No check command."
            )}{" "}
            Best first: a turn that completed with a change{x.checkCommand ? ", then check passed" : ""}, then the smaller change, fewer tokens, less time.
          </Text>
        </div>
        <div className="exploration-actions" role="toolbar" aria-label="Exploration">
          <CompareBranches key={x.id} x={x} busy={p.busy} onCompare={p.onCompare} />
          {canStop(x) && (
            <Button
              variant="soft"
              color="red"
              data-testid="stop-exploration"
              {...whileBusy(p.busy)}
              title="Stop every branch: none starts after this, running turns and checks are interrupted; nothing is lost"
              onClick={() => {
                if (p.busy) return;
                void p.onStop().then((o) => {
                  if (o) setStopped(o);
                });
              }}
            >
              Stop all
            </Button>
          )}
          <Button
            variant="soft"
            data-testid="archive-others"
            disabled={!!block}
            {...whileBusy(p.busy)}
            aria-describedby={block ? "archive-others-why" : undefined}
            title={block ?? "Archive every branch but the winner: their worktrees freed, their files kept"}
            onClick={() => {
              if (p.busy) return;
              void p.onArchiveOthers().then((o) => {
                if (o) setArchived(o);
              });
            }}
          >
            Archive the others
          </Button>
          <Button variant="ghost" color="gray" data-testid="close-exploration" onClick={p.onClose}>
            Close exploration
          </Button>
        </div>
        {block && (
          <Text as="p" size="1" className="muted exploration-why" id="archive-others-why" data-testid="archive-others-why">
            {block}
          </Text>
        )}
      </header>
      {stopped && (
        <div className={stopped.failed.length ? "apply-outcome bad" : "apply-outcome ok"} role="status" data-testid="stop-outcome">
          Stopped{stopped.interrupted.length ? `; interrupted ${stopped.interrupted.join(", ")}` : ""}.
          {stopped.failed.map((f) => (
            <span key={f.branchName}>
              {" "}
              Could not interrupt {f.branchName}: <code className="code">{f.errorCode}</code> {f.errorMessage}
            </span>
          ))}
        </div>
      )}
      {archived && (
        <div className={archived.failed.length ? "apply-outcome bad" : "apply-outcome ok"} role="status" data-testid="archive-outcome">
          {archived.archived.length ? `Archived ${archived.archived.join(", ")}.` : "Nothing archived."}
          {archived.failed.map((f) => (
            <span key={f.branchName}>
              {" "}
              Could not archive {f.branchName}: <code className="code">{f.errorCode}</code> {f.errorMessage}
            </span>
          ))}
        </div>
      )}
      <div className="exploration-branches" data-testid="exploration-branches">
        {branches.map((b) => (
          <BranchCard
            key={b.name}
            wsId={p.wsId}
            b={b}
            hasCheck={!!x.checkCommand}
            recommended={recommended === b.name}
            busy={p.busy}
            onOpen={onOpen}
            onMarkWinner={onMarkWinner}
            onReview={onReview}
            onApply={onApply}
          />
        ))}
      </div>
    </section>
  );
});

interface CardProps {
  wsId: string;
  b: ExplorationBranchFieldsFragment;
  hasCheck: boolean;
  // recommended: this branch's Apply is the view's primary action.
  recommended: boolean;
  busy: boolean;
  onOpen: (sessionId: string) => void;
  onMarkWinner: (name: string | null) => void;
  onReview: (name: string) => void;
  onApply: (name: string, tell: boolean, again?: boolean) => Promise<BranchApply | null>;
}

// BranchCard is one branch. Apply to parent is a deliberate act: the
// recommended branch's is the primary button, the others' secondary; a
// branch whose turn or check did not pass asks first; telling the parent
// is on unless the person turns it off; once applied it says so.
const BranchCard = memo(function BranchCard({ wsId, b, hasCheck, recommended, busy, onOpen, onMarkWinner, onReview, onApply }: CardProps) {
  const [tell, setTell] = useState(true);
  const [outcome, setOutcome] = useState<BranchApply | null>(null);
  // confirming: the risky apply's question is shown.
  const [confirming, setConfirming] = useState(false);
  const risk = applyRisk(b);
  const applied = !!b.appliedAt || outcome?.kind === "applied";
  const applyWhy = applyBlock(b);
  const winWhy = winnerBlock(b);
  const reviewWhy = reviewBlock(b);
  // apply: Apply to parent and Tell the parent again; the outcome is said.
  const apply = (tellParent: boolean, again: boolean) => {
    if (busy) return;
    void onApply(b.name, tellParent, again).then((o) => {
      if (o) setOutcome(o);
    });
  };
  const told = !!b.toldAt;
  const session = b.session;
  return (
    <div
      role="group"
      aria-label={b.name}
      className={b.winner ? "branch-card winner" : "branch-card"}
      data-testid="exploration-branch"
      data-branch-name={b.name}
      data-state={b.state}
      data-rank={b.rank ?? undefined}
      data-winner={b.winner ? "true" : undefined}
    >
      <div className="branch-card-head">
        <strong className="branch-name">{b.name}</strong>
        <span className="small muted" data-testid="branch-rank">
          {b.rank ? `rank ${b.rank}` : "unranked"}
        </span>
        {b.winner && (
          <Badge color="green" variant="soft" data-testid="branch-winner">
            winner
          </Badge>
        )}
      </div>
      <div className={`branch-state small state-${b.state.toLowerCase()}`} data-testid="branch-state">
        {stateText(b)}
      </div>
      <div className="small muted" data-testid="branch-settings">
        {settingsText(b.session?.settings)}
      </div>
      {b.historySummarized && (
        <div className="small" role="note" data-testid="branch-summarized" title="Codex compacts the history when a fork changes model">
          On another model than the explored session: it read a summary of the conversation, not the conversation.
        </div>
      )}
      {b.state === "FAILED" && (
        <div className="turn-error small" role="note" data-testid="branch-error">
          {b.errorMessage}
          {b.errorCode && <code className="code"> ({b.errorCode})</code>}
        </div>
      )}
      <div className="branch-check small" data-testid="branch-check" data-check-state={b.check?.state}>
        {b.check ? (
          <details>
            <summary>
              <span className={`check-result check-${b.check.state.toLowerCase()}`}>{checkText(b.check)}</span>
              {checkDetail(b.check) && <span className="muted"> · {checkDetail(b.check)}</span>}
            </summary>
            <pre className="output" aria-label={`Check output of ${b.name}`}>
              {b.check.outputTruncated ? "… (earlier output cut)\n" : ""}
              {b.check.output || "(no output)"}
            </pre>
          </details>
        ) : (
          <span className="muted">{noCheckText(b, hasCheck)}</span>
        )}
      </div>
      <div className="small" data-testid="branch-change">
        {changeText(b)}
      </div>
      <div className="small muted" data-testid="branch-usage">
        {usageText(b)}
      </div>
      <details className="branch-prompt small">
        <summary className="muted">Prompt</summary>
        <p>{b.prompt}</p>
      </details>
      {b.review && (
        <div className="small" data-testid="branch-review" data-review-state={b.review.state}>
          {b.review.state === "RUNNING" && <span className="muted">Codex is reviewing the change…</span>}
          {b.review.state === "FAILED" && (
            <span className="turn-error" role="note">
              Review failed: {b.review.error}
            </span>
          )}
          {b.review.state === "DONE" && (
            <details>
              <summary>Codex&apos;s review</summary>
              <pre className="output" aria-label={`Review of ${b.name}`}>
                {b.review.text}
              </pre>
            </details>
          )}
        </div>
      )}
      <div className="branch-actions">
        <Button
          size="1"
          variant="soft"
          data-testid="review-branch"
          disabled={!!reviewWhy}
          {...whileBusy(busy)}
          title={reviewWhy ?? "Have Codex review this branch's change since the fork point (the branch's conversation is left as it is)"}
          onClick={() => {
            if (!busy) onReview(b.name);
          }}
        >
          Review
        </Button>
        <Button
          size="1"
          variant={b.winner ? "solid" : "soft"}
          color={b.winner ? "green" : undefined}
          data-testid="mark-winner"
          disabled={!b.winner && !!winWhy}
          {...whileBusy(busy)}
          title={b.winner ? "Clear the mark" : (winWhy ?? "Mark this branch the winner: Archive the others keeps it")}
          onClick={() => {
            if (!busy) onMarkWinner(b.winner ? null : b.name);
          }}
        >
          {b.winner ? "Unmark winner" : "Mark winner"}
        </Button>
        <label className="branch-tell small" title={told ? "The parent was told about this branch already" : "Also tell the parent's conversation what this branch did"}>
          <input type="checkbox" data-testid="tell-parent" checked={tell || told} disabled={told} onChange={(e) => setTell(e.target.checked)} />
          and tell the parent
        </label>
        <Button
          size="1"
          variant={recommended && !applied ? "solid" : "soft"}
          data-testid="apply-branch"
          data-recommended={recommended ? "true" : undefined}
          data-applied={applied ? "true" : undefined}
          disabled={!!applyWhy}
          {...whileBusy(busy)}
          title={
            applyWhy ??
            (applied
              ? "Applied to the parent: applying again brings only what changed since"
              : "Merge this branch's changes into the parent's files, as uncommitted changes")
          }
          onClick={() => {
            if (busy) return;
            if (risk || applied) setConfirming(true);
            else apply(tell && !told, false);
          }}
        >
          {applied ? "Applied" : "Apply to parent"}
        </Button>
        {session && (
          <Link
            size="1"
            href={`#w=${encodeURIComponent(wsId)}&s=${encodeURIComponent(session.id)}`}
            data-testid="open-branch"
            data-session-id={session.id}
            onClick={(e) => {
              e.preventDefault();
              onOpen(session.id);
            }}
          >
            Open session
          </Link>
        )}
      </div>
      {confirming && (
        <div className="apply-outcome bad small" role="alertdialog" aria-label={`Apply ${b.name}?`} data-testid="apply-confirm">
          {applied ? "This branch was applied to the parent already." : risk} Apply it to the parent anyway?{" "}
          <Button
            size="1"
            color="red"
            variant="soft"
            data-testid="apply-anyway"
            {...whileBusy(busy)}
            onClick={() => {
              setConfirming(false);
              apply(tell && !told, false);
            }}
          >
            Apply anyway
          </Button>{" "}
          <Button size="1" variant="soft" onClick={() => setConfirming(false)}>
            Cancel
          </Button>
        </div>
      )}
      {outcome && (
        <div className={outcome.kind === "conflicts" ? "apply-outcome bad small" : "apply-outcome ok small"} role="status" data-testid="branch-apply-outcome" data-kind={outcome.kind}>
          {branchApplyText(outcome)}
          {outcome.kind === "conflicts" && (
            <ul className="conflicts" aria-label="Conflicting files">
              {outcome.paths.map((path) => (
                <li key={path} data-conflict-path={path}>
                  <code>{path}</code>
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
      {!outcome && (b.appliedAt || told) && (
        <div className="small muted" data-testid="branch-brought-back">
          {[b.appliedAt && "applied to the parent", told && "the parent was told"].filter(Boolean).join("; ")}
        </div>
      )}
      {b.summaryState === "UNCERTAIN" && (
        <div className="apply-outcome bad small" role="status" data-testid="branch-tell-uncertain">
          tuttid stopped while telling the parent this branch&apos;s summary: the parent may or may not have it.{" "}
          <Button
            size="1"
            variant="soft"
            {...whileBusy(busy)}
            title="Tell the parent the summary now; if the earlier telling reached it, it will have it twice"
            onClick={() => apply(true, true)}
          >
            Tell the parent again
          </Button>
        </div>
      )}
      {told && b.summary && (
        <details className="small">
          <summary className="muted">What the parent was told</summary>
          <pre className="output">{b.summary}</pre>
        </details>
      )}
    </div>
  );
});

// CompareBranches: which two branches to put side by side (the best two
// to start with), then the Compare view.
function CompareBranches({ x, busy, onCompare }: { x: ExplorationFieldsFragment; busy: boolean; onCompare: (a: string, b: string) => void }) {
  const options = comparable(x).map((b) => ({ name: b.name, id: b.session!.id }));
  const [a, setA] = useState("");
  const [b, setB] = useState("");
  const first = options.some((o) => o.id === a) ? a : (options[0]?.id ?? "");
  const second = options.some((o) => o.id === b) && b !== first ? b : (options.find((o) => o.id !== first)?.id ?? "");
  return (
    <form
      className="explore-compare"
      data-testid="explore-compare"
      onSubmit={(e) => {
        e.preventDefault();
        if (!busy && first && second && first !== second) onCompare(first, second);
      }}
    >
      <select aria-label="First branch" data-testid="compare-first" value={first} onChange={(e) => setA(e.target.value)}>
        {options.map((o) => (
          <option key={o.id} value={o.id}>
            {o.name}
          </option>
        ))}
      </select>
      <span className="small muted" aria-hidden="true">
        with
      </span>
      <select aria-label="Second branch" data-testid="compare-second" value={second} onChange={(e) => setB(e.target.value)}>
        {options
          .filter((o) => o.id !== first)
          .map((o) => (
            <option key={o.id} value={o.id}>
              {o.name}
            </option>
          ))}
      </select>
      <Button type="submit" variant="soft" data-testid="compare-branches" disabled={!second} {...whileBusy(busy)} title="Show the two branches side by side: their turns and their code">
        Compare
      </Button>
    </form>
  );
}
