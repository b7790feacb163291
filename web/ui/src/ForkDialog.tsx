// The fork dialog: fork the whole conversation with other settings. It
// starts from the parent's settings and sends only what the person
// changed. Non-modal role="dialog" (see CodexSignIn for why not Radix's).
import { Button, Card, Flex, Heading } from "@radix-ui/themes";
import { useState } from "react";
import type { CodexModelFieldsFragment, ComposerSettingsInput } from "./gql/graphql";
import { SettingsFields } from "./SettingsFields";
import { changed, type Settings } from "./state/settings";

interface Props {
  parent: Settings;
  models: readonly CodexModelFieldsFragment[];
  busy: boolean;
  onFork: (settings: ComposerSettingsInput | undefined) => void;
  onClose: () => void;
}

export function ForkDialog({ parent, models, busy, onFork, onClose }: Props) {
  const [value, setValue] = useState(parent);
  return (
    <div className="fork-dialog" role="dialog" aria-labelledby="fork-dialog-title" data-testid="fork-dialog">
      <Card size="2">
        <form
          onSubmit={(e) => {
            e.preventDefault();
            onFork(changed(parent, value));
          }}
        >
          <Flex direction="column" gap="3">
            <Heading as="h2" size="3" id="fork-dialog-title">
              Fork with settings
            </Heading>
            <SettingsFields idPrefix="fork" models={models} value={value} onChange={setValue} />
            <Flex gap="2" justify="end">
              <Button type="button" variant="ghost" color="gray" onClick={onClose}>
                Cancel
              </Button>
              <Button type="submit" data-testid="fork-dialog-submit" disabled={busy}>
                Create fork
              </Button>
            </Flex>
          </Flex>
        </form>
      </Card>
    </div>
  );
}
