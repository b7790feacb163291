// In the shown session's view (issue 32): the explorations made from it,
// each a link to its exploration view, and on a branch the exploration it
// belongs to.
import { Link, Text } from "@radix-ui/themes";
import type { SessionExplorations } from "./state/useExploration";

interface Props {
  wsId: string;
  listed: SessionExplorations;
  onOpen: (parentId: string, explorationId: string) => void;
}

function short(text: string | null | undefined): string {
  const t = (text ?? "").trim();
  return t.length > 60 ? t.slice(0, 59) + "…" : t;
}

export function ExplorationLinks({ wsId, listed, onOpen }: Props) {
  const mine = listed.explorations;
  const of = listed.exploration;
  const branch = of?.branches.find((b) => b.session?.id === listed.id);
  if (mine.length === 0 && !of) return null;
  const href = (parent: string, x: string) => `#w=${encodeURIComponent(wsId)}&s=${encodeURIComponent(parent)}&x=${encodeURIComponent(x)}`;
  return (
    <nav className="exploration-links" aria-label="Explorations" data-testid="exploration-links">
      {of && (
        <Text size="1" as="p" data-testid="branch-of">
          Branch {branch ? <strong>{branch.name}</strong> : null} of an exploration:{" "}
          <Link
            href={href(of.agentSessionId, of.id)}
            data-testid="open-parent-exploration"
            onClick={(e) => {
              e.preventDefault();
              onOpen(of.agentSessionId, of.id);
            }}
          >
            Open the exploration
          </Link>
        </Text>
      )}
      {mine.length > 0 && (
        <>
          <Text size="1" className="muted">
            Explorations from this session:
          </Text>
          <ul>
            {mine.map((x) => (
              <li key={x.id}>
                <Link
                  size="1"
                  href={href(listed.id, x.id)}
                  data-testid="exploration-link"
                  data-exploration-id={x.id}
                  onClick={(e) => {
                    e.preventDefault();
                    onOpen(listed.id, x.id);
                  }}
                >
                  {x.branches.length} branches{x.prompt ? `: “${short(x.prompt)}”` : ""}
                </Link>{" "}
                <span className="small muted">
                  {x.state.toLowerCase()}
                  {x.winner ? `, winner ${x.winner.name}` : ""}
                </span>
              </li>
            ))}
          </ul>
        </>
      )}
    </nav>
  );
}
