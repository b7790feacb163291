import { Badge } from "@radix-ui/themes";

const colors = {
  READY: "gray",
  WORKING: "blue",
  COMPLETED: "green",
  FAILED: "red",
  IN_PROGRESS: "blue",
  INTERRUPTED: "orange",
} as const;

// StatusBadge shows a session's or a turn's status; the screen reader reads
// it after the title (the accessible name starts with the title).
export function StatusBadge({ status }: { status: string }) {
  const color = colors[status as keyof typeof colors] ?? "gray";
  return (
    <Badge className="status" data-testid="status" data-status={status} color={color} variant="soft" radius="full">
      {status.toLowerCase().replace("_", " ")}
    </Badge>
  );
}
