// The last error, under the top bar, until dismissed or the next action.
import { Button, Callout } from "@radix-ui/themes";
import type { ApiError } from "./client";

export function ErrorBanner({ error, onDismiss }: { error: ApiError | null; onDismiss: () => void }) {
  return (
    <div className="banner-slot">
      <div className="banner" data-testid="error-banner" role="alert" hidden={!error} data-code={error?.code}>
        {error && (
          <Callout.Root color="red" size="1">
            <Callout.Text>
              <code className="code">{error.code}</code> {error.message}
            </Callout.Text>
            <Button size="1" variant="ghost" aria-label="Dismiss error" onClick={onDismiss}>
              ×
            </Button>
          </Callout.Root>
        )}
      </div>
    </div>
  );
}
