// UnavailableBadge says that a session's commands cannot run now and why
// (its owner instance is down): in the tree and in the session's header.
// Written out like StatusBadge (the tree shows one per session).
import { memo } from "react";

export const UnavailableBadge = memo(function UnavailableBadge({ reason, full }: { reason: string; full?: boolean }) {
  return (
    <span
      className="rt-reset rt-Badge rt-r-size-1 rt-variant-soft unavailable"
      data-accent-color="orange"
      data-radius="full"
      data-testid="unavailable"
      data-reason={reason}
      title={`Unavailable: ${reason}`}
    >
      {full ? `unavailable: ${reason}` : "unavailable"}
      {!full && <span className="sr-only">: {reason}</span>}
    </span>
  );
});
