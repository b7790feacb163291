// StatusBadge shows a session's or a turn's status; the screen reader reads
// it after the title (the accessible name starts with the title). It is
// the markup of Radix's soft Badge written out: the fork tree shows one per
// session, and a thousand Badge components cost a render of their props
// each.
import { memo } from "react";

const colors = {
  READY: "gray",
  WORKING: "blue",
  COMPLETED: "green",
  FAILED: "red",
  IN_PROGRESS: "blue",
  INTERRUPTED: "orange",
} as const;

export const StatusBadge = memo(function StatusBadge({ status }: { status: string }) {
  const color = colors[status as keyof typeof colors] ?? "gray";
  return (
    <span className="rt-reset rt-Badge rt-r-size-1 rt-variant-soft status" data-accent-color={color} data-radius="full" data-testid="status" data-status={status}>
      {status.toLowerCase().replace("_", " ")}
    </span>
  );
});
