// Tidying a tree of experiments: rename the shown session, archive it
// (hidden from the tree, restorable) or delete it with all its forks after
// one confirmation (a second one when its own worktree holds changes never
// applied: the server names them, and discarding them is the person's
// choice).
import { Button, Flex, Popover, Text, TextField } from "@radix-ui/themes";
import { useState } from "react";

interface Props {
  title: string;
  archived: boolean;
  descendants: number;
  busy: boolean;
  onRename: (title: string) => Promise<boolean>;
  onArchive: (archived: boolean) => void;
  onDelete: (discardChanges?: boolean) => Promise<string | null>;
}

export function RenameForm({ title, busy, onRename, onDone }: { title: string; busy: boolean; onRename: (t: string) => Promise<boolean>; onDone: () => void }) {
  const [value, setValue] = useState(title);
  return (
    <form
      className="rename"
      data-testid="rename-form"
      onSubmit={async (e) => {
        e.preventDefault();
        if (await onRename(value.trim())) onDone();
      }}
    >
      <Flex gap="2" align="center">
        <TextField.Root
          aria-label="Title"
          data-testid="rename-input"
          value={value}
          maxLength={200}
          autoFocus
          onChange={(e) => setValue(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Escape") onDone();
          }}
        />
        <Button type="submit" size="1" disabled={busy} data-testid="rename-save">
          Save
        </Button>
        <Button type="button" size="1" variant="soft" color="gray" onClick={onDone}>
          Cancel
        </Button>
      </Flex>
    </form>
  );
}

export function TidyActions(p: Props & { onStartRename: () => void }) {
  const [confirming, setConfirming] = useState(false);
  // Why the server refused the delete: a worktree's unapplied changes.
  const [refused, setRefused] = useState<string | null>(null);
  const remove = (discard: boolean) => {
    setConfirming(false);
    setRefused(null);
    void p.onDelete(discard).then((why) => {
      if (why) {
        setRefused(why);
        setConfirming(true);
      }
    });
  };
  const what = p.descendants > 0 ? `“${p.title}” and its ${p.descendants} fork${p.descendants === 1 ? "" : "s"}` : `“${p.title}”`;
  return (
    <>
      <Button variant="soft" color="gray" disabled={p.busy} onClick={p.onStartRename} data-testid="rename">
        Rename
      </Button>
      <Button variant="soft" color="gray" disabled={p.busy} onClick={() => p.onArchive(!p.archived)} data-testid={p.archived ? "restore" : "archive"}>
        {p.archived ? "Restore" : "Archive"}
      </Button>
      <Popover.Root
        open={confirming}
        onOpenChange={(open) => {
          setConfirming(open);
          if (!open) setRefused(null);
        }}
        modal={false}
      >
        <Popover.Trigger>
          <Button variant="soft" color="red" disabled={p.busy} data-testid="delete">
            Delete…
          </Button>
        </Popover.Trigger>
        <Popover.Content size="2" maxWidth="22rem" data-testid="delete-confirm">
          <Flex direction="column" gap="3">
            <Text size="2">Delete {what}? Their conversations are gone for good.</Text>
            {refused && (
              <Text size="2" color="red" role="alert" data-testid="delete-refused">
                {refused}
              </Text>
            )}
            <Flex gap="2" justify="end">
              <Popover.Close>
                <Button variant="soft" color="gray">
                  Keep
                </Button>
              </Popover.Close>
              {refused ? (
                <Button color="red" data-testid="delete-discard" onClick={() => remove(true)}>
                  Delete and discard the changes
                </Button>
              ) : (
                <Button color="red" data-testid="delete-confirmed" onClick={() => remove(false)}>
                  Delete {p.descendants > 0 ? `all ${p.descendants + 1}` : ""}
                </Button>
              )}
            </Flex>
          </Flex>
        </Popover.Content>
      </Popover.Root>
    </>
  );
}
