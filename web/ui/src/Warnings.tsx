// Codex's warnings (PROVIDER_WARNING), each shown once under the top bar
// until dismissed: those about its configuration, and those about the
// shown session's thread.
import { Button, Callout } from "@radix-ui/themes";
import type { Warning } from "./state/activity";

export function Warnings({ warnings, activeId, onDismiss }: { warnings: readonly Warning[]; activeId?: string; onDismiss: (key: string) => void }) {
  const shown = warnings.filter((w) => w.sessionId === null || w.sessionId === activeId);
  if (shown.length === 0) return null;
  return (
    <div className="banner-slot" role="region" aria-label="Codex warnings">
      {shown.map((w) => (
        <div className="banner" key={w.key} role="status" data-warning-kind={w.kind}>
          <Callout.Root color="amber" size="1">
            <Callout.Text>
              <strong>Codex {w.kind === "deprecationNotice" ? "deprecation" : w.kind === "configWarning" ? "configuration warning" : "warning"}:</strong> {w.text}
            </Callout.Text>
            <Button size="1" variant="ghost" aria-label="Dismiss warning" onClick={() => onDismiss(w.key)}>
              ×
            </Button>
          </Callout.Root>
        </div>
      ))}
    </div>
  );
}
