// The fork tree: a workspace's sessions as an ARIA tree (WAI-ARIA APG tree
// pattern): one treeitem per session, forks nested under their parents,
// roving tabindex and the arrow, Home, End, Enter and Space keys.
import { useMemo, useRef, useState, type KeyboardEvent } from "react";
import { Badge } from "@radix-ui/themes";
import { StatusBadge } from "./Status";
import type { SessionSummaryFragment } from "./gql/graphql";

interface Node {
  s: SessionSummaryFragment;
  level: number;
  children: Node[];
}

export function buildForest(sessions: SessionSummaryFragment[]): Node[] {
  const byId = new Map<string, Node>();
  for (const s of sessions) byId.set(s.id, { s, level: 1, children: [] });
  const roots: Node[] = [];
  for (const s of sessions) {
    const n = byId.get(s.id)!;
    const p = s.parent ? byId.get(s.parent.id) : undefined;
    if (p) p.children.push(n);
    else roots.push(n);
  }
  const setLevel = (n: Node, level: number) => {
    n.level = level;
    n.children.forEach((c) => setLevel(c, level + 1));
  };
  roots.forEach((r) => setLevel(r, 1));
  return roots;
}

interface Props {
  sessions: SessionSummaryFragment[];
  selected?: string;
  onSelect: (id: string) => void;
}

export function ForkTree({ sessions, selected, onSelect }: Props) {
  const forest = useMemo(() => buildForest(sessions), [sessions]);
  const [collapsed, setCollapsed] = useState<Set<string>>(new Set());
  const [focusId, setFocusId] = useState<string | undefined>();
  const ref = useRef<HTMLUListElement>(null);

  // The items a keyboard walks: those not inside a collapsed branch.
  const visible: Node[] = [];
  const parentOf = new Map<string, string>();
  const walk = (ns: Node[], shown: boolean) => {
    for (const n of ns) {
      if (shown) visible.push(n);
      n.children.forEach((c) => parentOf.set(c.s.id, n.s.id));
      walk(n.children, shown && !collapsed.has(n.s.id));
    }
  };
  walk(forest, true);
  const tabId = visible.some((n) => n.s.id === focusId) ? focusId : visible.some((n) => n.s.id === selected) ? selected : visible[0]?.s.id;

  const focus = (id: string | undefined) => {
    if (!id) return;
    setFocusId(id);
    ref.current?.querySelector<HTMLElement>(`[role="treeitem"][data-session-id="${CSS.escape(id)}"]`)?.focus();
  };
  const toggle = (id: string, open?: boolean) =>
    setCollapsed((c) => {
      const next = new Set(c);
      const isOpen = !next.has(id);
      if (open ?? !isOpen) next.delete(id);
      else next.add(id);
      return next;
    });

  const onKey = (e: KeyboardEvent, n: Node) => {
    const i = visible.findIndex((v) => v.s.id === n.s.id);
    const hasKids = n.children.length > 0;
    const open = hasKids && !collapsed.has(n.s.id);
    switch (e.key) {
      case "ArrowDown":
        focus(visible[i + 1]?.s.id);
        break;
      case "ArrowUp":
        focus(visible[i - 1]?.s.id);
        break;
      case "ArrowRight":
        if (hasKids && !open) toggle(n.s.id, true);
        else if (open) focus(n.children[0].s.id);
        break;
      case "ArrowLeft":
        if (open) toggle(n.s.id, false);
        else focus(parentOf.get(n.s.id));
        break;
      case "Home":
        focus(visible[0]?.s.id);
        break;
      case "End":
        focus(visible[visible.length - 1]?.s.id);
        break;
      case "Enter":
      case " ":
        onSelect(n.s.id);
        break;
      default:
        return;
    }
    e.preventDefault();
    e.stopPropagation();
  };

  const item = (n: Node) => {
    const id = n.s.id;
    const hasKids = n.children.length > 0;
    const open = hasKids && !collapsed.has(id);
    const labelId = `tree-label-${id}`;
    return (
      <li
        key={id}
        role="treeitem"
        data-testid="session-item"
        data-session-id={id}
        data-depth={n.level - 1}
        data-status={n.s.status}
        data-archived={n.s.archived ? "true" : undefined}
        aria-level={n.level}
        aria-selected={id === selected}
        aria-expanded={hasKids ? open : undefined}
        aria-labelledby={labelId}
        tabIndex={id === tabId ? 0 : -1}
        onKeyDown={(e) => onKey(e, n)}
        onFocus={(e) => {
          if (e.target === e.currentTarget) setFocusId(id);
        }}
        onClick={(e) => {
          e.stopPropagation();
          onSelect(id);
        }}
      >
        <div className="tree-row">
          {hasKids ? (
            <span
              className="tree-twisty"
              aria-hidden="true"
              onClick={(e) => {
                e.stopPropagation();
                toggle(id);
              }}
            >
              {open ? "▾" : "▸"}
            </span>
          ) : (
            <span className="tree-twisty" aria-hidden="true" />
          )}
          <span id={labelId} className="tree-label">
            <span className="tree-title">{n.s.displayTitle}</span>
            <StatusBadge status={n.s.status} />
            {n.s.archived && (
              <Badge color="gray" variant="outline" radius="full">
                archived
              </Badge>
            )}
          </span>
        </div>
        {hasKids && (
          <ul role="group" hidden={!open}>
            {n.children.map(item)}
          </ul>
        )}
      </li>
    );
  };

  return (
    <ul ref={ref} role="tree" aria-label="Sessions" className="tree" data-testid="session-list">
      {forest.map(item)}
    </ul>
  );
}
