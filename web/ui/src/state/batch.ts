// Collecting what arrives in a burst and handling it together, once per
// animation frame: a thousand activity events in a second cost sixty
// reducer runs and renders, not a thousand. A hidden tab gets no frames,
// so a timer bounds the wait too.
export interface Batcher<T> {
  push: (item: T) => void;
  // flush handles what is pending now.
  flush: () => void;
  // drop forgets what is pending.
  drop: () => void;
}

// Schedule calls fn later, once, and returns how to cancel it.
export type Schedule = (fn: () => void) => () => void;

// The longest a pushed item waits when no frame comes (a hidden tab).
const maxWaitMs = 100;

export const nextFrame: Schedule = (fn) => {
  let done = false;
  const once = () => {
    if (done) return;
    done = true;
    cancelAnimationFrame(raf);
    clearTimeout(timer);
    fn();
  };
  const raf = requestAnimationFrame(once);
  const timer = setTimeout(once, maxWaitMs);
  return () => {
    done = true;
    cancelAnimationFrame(raf);
    clearTimeout(timer);
  };
};

export function batcher<T>(run: (items: T[]) => void, schedule: Schedule = nextFrame): Batcher<T> {
  let pending: T[] = [];
  let cancel: (() => void) | null = null;
  const flush = () => {
    cancel?.();
    cancel = null;
    if (pending.length === 0) return;
    const items = pending;
    pending = [];
    run(items);
  };
  return {
    push: (item) => {
      pending.push(item);
      if (!cancel) cancel = schedule(flush);
    },
    flush,
    drop: () => {
      cancel?.();
      cancel = null;
      pending = [];
    },
  };
}
