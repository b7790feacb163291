// The composer: the message to send (Ctrl+Enter sends it), and Steer
// (the text goes to the running turn) beside Stop while a turn runs. The draft is the page's, so it outlives the session shown.
import { Button, TextArea } from "@radix-ui/themes";
import { disabledTitle } from "./state/availability";

interface Props {
  draft: string;
  onDraft: (text: string) => void;
  busy: boolean;
  // Why nothing can be sent now (the owner instance is down), or null.
  unavailable?: string | null;
  // working: the session is at work (nothing can be sent); running: a
  // loaded turn runs (it can be stopped).
  working: boolean;
  running: boolean;
  onSend: () => void;
  onStop: () => void;
  onSteer: () => void;
}

export function Composer(p: Props) {
  return (
    <form
      className="composer"
      data-testid="composer"
      onSubmit={(e) => {
        e.preventDefault();
        if (p.running) p.onSteer();
        else p.onSend();
      }}
    >
      <TextArea
        data-testid="composer-input"
        aria-label="Message"
        rows={3}
        placeholder="Message the agent (Ctrl+Enter to send)"
        value={p.draft}
        onChange={(e) => p.onDraft(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
            e.preventDefault();
            e.currentTarget.form?.requestSubmit();
          }
        }}
      />
      <div className="composer-buttons">
        <Button type="submit" data-testid="send" hidden={p.running} disabled={p.busy || p.working || !!p.unavailable} title={disabledTitle(p.unavailable ?? null)}>
          Send
        </Button>
        <Button type="submit" data-testid="steer" hidden={!p.running} disabled={p.busy || !p.draft.trim() || !!p.unavailable} title={disabledTitle(p.unavailable ?? null, "Add this to the running turn without stopping it")}>
          Steer
        </Button>
        <Button type="button" color="red" variant="soft" data-testid="interrupt" hidden={!p.running} disabled={p.busy || !!p.unavailable} title={disabledTitle(p.unavailable ?? null)} onClick={p.onStop}>
          Stop
        </Button>
      </div>
    </form>
  );
}
