// The fork tree: a workspace's sessions as an ARIA tree (WAI-ARIA APG tree
// pattern): one treeitem per session, forks nested under their parents,
// each with its level and place among its siblings (aria-level,
// aria-setsize, aria-posinset), roving tabindex and the arrow, Home, End,
// Enter and Space keys.
//
// Built for 1,000 sessions: each treeitem is a memoized Item whose node
// buildForest keeps while its branch shows the same, and which reads
// whether it is open, selected or tabbable from a small store (rowState)
// rather than from props. Opening a branch re-renders that one item and
// flips its group's hidden; selecting re-renders two items; a rename
// re-renders the renamed session's branch from its root.
import { memo, useCallback, useLayoutEffect, useMemo, useRef, useState, useSyncExternalStore, type KeyboardEvent } from "react";
import { StatusBadge } from "./Status";
import { reasonOf } from "./state/availability";
import { UnavailableBadge } from "./Unavailable";
import { treeCode, treeCodeLabel } from "./state/code";
import { buildForest, nodeIndex, shownIn, treeRows, type TreeNode, type TreeSession } from "./treeRows";

export { buildForest };

interface Props {
  sessions: TreeSession[];
  selected?: string;
  onSelect: (id: string) => void;
}

// What an item does on its events, kept current in a ref so that items
// need not re-render when the handlers change.
interface Handlers {
  key: (e: KeyboardEvent, id: string) => void;
  select: (id: string) => void;
  toggle: (id: string) => void;
  focused: (id: string) => void;
}

// The per-item state an item subscribes to: open, selected, tabbable.
const OPEN = 1,
  SELECTED = 2,
  TABBABLE = 4;

interface RowState {
  collapsed: ReadonlySet<string>;
  selected?: string;
  tabId?: string;
}

class RowStore {
  private state: RowState = { collapsed: new Set() };
  private listeners = new Set<() => void>();
  subscribe = (l: () => void) => {
    this.listeners.add(l);
    return () => void this.listeners.delete(l);
  };
  bits(id: string): number {
    const s = this.state;
    return (s.collapsed.has(id) ? 0 : OPEN) | (s.selected === id ? SELECTED : 0) | (s.tabId === id ? TABBABLE : 0);
  }
  set(next: RowState) {
    const s = this.state;
    if (s.collapsed === next.collapsed && s.selected === next.selected && s.tabId === next.tabId) return;
    this.state = next;
    for (const l of this.listeners) l();
  }
}

export function ForkTree({ sessions, selected, onSelect }: Props) {
  const last = useRef<TreeNode[] | undefined>(undefined);
  const forest = useMemo(() => buildForest(sessions, last.current), [sessions]);
  last.current = forest;
  const [collapsed, setCollapsed] = useState<ReadonlySet<string>>(new Set());
  const [focusId, setFocusId] = useState<string | undefined>();
  const ref = useRef<HTMLUListElement>(null);
  const byId = nodeIndex(forest);
  const tabId = shownIn(byId, collapsed, focusId) ? focusId : shownIn(byId, collapsed, selected) ? selected : forest[0]?.s.id;

  const [store] = useState(() => new RowStore());
  // Before the browser paints: the items read the state this render made.
  useLayoutEffect(() => store.set({ collapsed, selected, tabId }), [store, collapsed, selected, tabId]);

  const focus = (id: string | undefined) => {
    if (!id) return;
    setFocusId(id);
    ref.current?.querySelector<HTMLElement>(`[role="treeitem"][data-session-id="${CSS.escape(id)}"]`)?.focus();
  };
  const toggle = useCallback(
    (id: string, open?: boolean) =>
      setCollapsed((c) => {
        const isOpen = !c.has(id);
        const want = open ?? !isOpen;
        if (want === isOpen) return c;
        const next = new Set(c);
        if (want) next.delete(id);
        else next.add(id);
        return next;
      }),
    [],
  );

  const onKey = (e: KeyboardEvent, id: string) => {
    // The items a keyboard walks: those not inside a collapsed branch
    // (walked when a key is pressed, not at every render).
    const visible = treeRows(forest, collapsed).filter((r) => !r.hidden);
    const i = visible.findIndex((r) => r.s.id === id);
    if (i < 0) return;
    const r = visible[i];
    const hasKids = r.firstChildId !== undefined;
    switch (e.key) {
      case "ArrowDown":
        focus(visible[i + 1]?.s.id);
        break;
      case "ArrowUp":
        focus(visible[i - 1]?.s.id);
        break;
      case "ArrowRight":
        if (hasKids && !r.open) toggle(id, true);
        else if (r.open) focus(r.firstChildId);
        break;
      case "ArrowLeft":
        if (r.open) toggle(id, false);
        else focus(r.parentId);
        break;
      case "Home":
        focus(visible[0]?.s.id);
        break;
      case "End":
        focus(visible[visible.length - 1]?.s.id);
        break;
      case "Enter":
      case " ":
        onSelect(id);
        break;
      default:
        return;
    }
    e.preventDefault();
    e.stopPropagation();
  };

  const handlers = useRef<Handlers>(null!);
  handlers.current = { key: onKey, select: onSelect, toggle: (id) => toggle(id), focused: setFocusId };

  return (
    <ul ref={ref} role="tree" aria-label="Sessions" className="tree" data-testid="session-list">
      {forest.map((n, i) => (
        <Item key={n.s.id} node={n} setSize={forest.length} posInSet={i + 1} store={store} handlers={handlers} />
      ))}
    </ul>
  );
}

interface ItemProps {
  node: TreeNode;
  setSize: number;
  posInSet: number;
  store: RowStore;
  handlers: { current: Handlers };
}

const Item = memo(function Item({ node, setSize, posInSet, store, handlers }: ItemProps) {
  const { s, level, children } = node;
  const id = s.id;
  const bits = useSyncExternalStore(store.subscribe, () => store.bits(id));
  const hasKids = children.length > 0;
  const open = hasKids && (bits & OPEN) !== 0;
  const labelId = `tree-label-${id}`;
  const code = treeCode(s);
  const why = reasonOf(s);
  return (
    <li
      role="treeitem"
      data-testid="session-item"
      data-session-id={id}
      data-depth={level - 1}
      data-status={s.status}
      data-archived={s.archived ? "true" : undefined}
      data-unavailable={why ? "true" : undefined}
      className={level > 8 ? "deep" : undefined}
      aria-level={level}
      aria-setsize={setSize}
      aria-posinset={posInSet}
      aria-selected={(bits & SELECTED) !== 0}
      aria-expanded={hasKids ? open : undefined}
      aria-labelledby={labelId}
      tabIndex={bits & TABBABLE ? 0 : -1}
      onKeyDown={(e) => handlers.current.key(e, id)}
      onFocus={(e) => {
        if (e.target === e.currentTarget) handlers.current.focused(id);
      }}
      onClick={(e) => {
        e.stopPropagation();
        handlers.current.select(id);
      }}
    >
      <div className="tree-row">
        {hasKids ? (
          <span
            className="tree-twisty"
            aria-hidden="true"
            onClick={(e) => {
              e.stopPropagation();
              handlers.current.toggle(id);
            }}
          >
            {open ? "▾" : "▸"}
          </span>
        ) : (
          <span className="tree-twisty" aria-hidden="true" />
        )}
        <span id={labelId} className="tree-label">
          <span className="tree-title">{s.displayTitle}</span>
          <StatusBadge status={s.status} />
          {why && <UnavailableBadge reason={why} />}
          {code && (
            <span
              className="tree-code"
              data-testid="tree-code"
              data-files={code.files}
              data-present={code.present ? "true" : "false"}
              title={treeCodeLabel(code)}
            >
              <span aria-hidden="true">⎇ {code.files}</span>
              <span className="sr-only">{treeCodeLabel(code)}</span>
            </span>
          )}
          {s.archived && <span className="rt-reset rt-Badge rt-r-size-1 rt-variant-outline" data-accent-color="gray" data-radius="full">archived</span>}
        </span>
      </div>
      {hasKids && (
        <ul role="group" hidden={!open}>
          {children.map((c, i) => (
            <Item key={c.s.id} node={c} setSize={children.length} posInSet={i + 1} store={store} handlers={handlers} />
          ))}
        </ul>
      )}
    </li>
  );
});
