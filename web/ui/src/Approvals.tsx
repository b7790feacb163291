// What Codex asks a person: each pending approval as a prompt with the
// decisions it offers.
import { Button, Callout, Code, Flex, Text } from "@radix-ui/themes";
import type { ApprovalDecision, ApprovalFieldsFragment, ApprovalKind } from "./gql/graphql";

const decisionLabels: Record<ApprovalDecision, string> = {
  ACCEPT: "Accept",
  ACCEPT_FOR_SESSION: "Accept for this session",
  ACCEPT_ALWAYS: "Always accept this command",
  DECLINE: "Decline",
  CANCEL: "Decline and stop the turn",
};

const kindLabels: Record<ApprovalKind, string> = {
  COMMAND: "Run a command",
  FILE_CHANGE: "Change files",
  PERMISSIONS: "Grant permissions",
  USER_INPUT: "Answer a question",
  MCP_ELICITATION: "Answer a tool's question",
};

export function ApprovalPrompt({ a, busy, onDecide }: { a: ApprovalFieldsFragment; busy: boolean; onDecide: (id: string, d: ApprovalDecision) => void }) {
  const details = a.kind === "COMMAND" ? null : a.details && typeof a.details === "object" ? JSON.stringify(a.details, null, 2) : null;
  return (
    <div className="approval" data-testid="approval" data-approval-id={a.id} data-kind={a.kind} role="group" aria-label={`The agent asks: ${kindLabels[a.kind] ?? a.kind}`}>
      <Callout.Root color="amber" size="1">
        <Flex direction="column" gap="2">
          <Text weight="bold" size="2">
            The agent asks to {(kindLabels[a.kind] ?? a.kind).toLowerCase()}
          </Text>
          {a.command && (
            <div>
              <Code>{a.command}</Code>
            </div>
          )}
          {a.cwd && <Text size="1">in {a.cwd}</Text>}
          {a.reason && <Text size="2">{a.reason}</Text>}
          {details && <pre className="output">{details}</pre>}
          <Flex gap="2" wrap="wrap">
            {a.availableDecisions.map((d) => (
              <Button
                key={d}
                size="1"
                variant={d === "ACCEPT" ? "solid" : "soft"}
                color={d === "DECLINE" || d === "CANCEL" ? "red" : undefined}
                disabled={busy}
                data-testid="approval-decision"
                data-decision={d}
                onClick={() => onDecide(a.id, d)}
              >
                {decisionLabels[d] ?? d}
              </Button>
            ))}
          </Flex>
        </Flex>
      </Callout.Root>
    </div>
  );
}
