// Loading and refreshing what the page shows. Each loader coalesces: a
// refresh asked for while one runs runs once more after it, so a burst of
// activity events costs two requests, not one per event. busy() says
// whether one runs (what it reads may predate a change seen meanwhile).
export type Coalesced = (() => Promise<void>) & { busy: () => boolean };

export function coalesce(fn: () => Promise<void>): Coalesced {
  let running: Promise<void> | null = null;
  let again = false;
  const run = async (): Promise<void> => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      try {
        do {
          again = false;
          await fn();
        } while (again);
      } finally {
        running = null;
      }
    })();
    return running;
  };
  return Object.assign(run, { busy: () => running !== null });
}
