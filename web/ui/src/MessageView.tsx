// One conversation item, readable by its kind: the user's and the agent's
// text, reasoning (collapsed), plans, commands with their output, file
// changes as diffs, tool calls and web searches; anything else as JSON.
import { Code, Text } from "@radix-ui/themes";
import type { MessageFieldsFragment } from "./gql/graphql";

type Obj = Record<string, unknown>;

const obj = (v: unknown): Obj => (v && typeof v === "object" && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string => (typeof v === "string" ? v : v == null ? "" : JSON.stringify(v, null, 2));
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

// Diff shows a change: a unified diff with its lines marked, or an added
// (deleted) file's whole text as added (deleted) lines.
function Diff({ text, kind }: { text: string; kind: string }) {
  return (
    <pre className="diff">
      {text.split("\n").map((line, i) => {
        const cls = kind === "add" ? "add" : kind === "delete" ? "del" : line.startsWith("+") && !line.startsWith("+++") ? "add" : line.startsWith("-") && !line.startsWith("---") ? "del" : line.startsWith("@@") ? "hunk" : "";
        return (
          <span key={i} className={cls}>
            {line + "\n"}
          </span>
        );
      })}
    </pre>
  );
}

// streamed returns the text streamed so far for m (its MESSAGE_DELTAs),
// when it is ahead of what is stored.
function streamed(streams: ReadonlyMap<string, string> | undefined, m: MessageFieldsFragment, stored: string): string {
  const s = streams?.get(m.id);
  return s && s.length > stored.length ? s : stored;
}

function Body({ m, streams }: { m: MessageFieldsFragment; streams?: ReadonlyMap<string, string> }) {
  const c = obj(m.content);
  switch (m.kind) {
    case "userMessage":
      return <div className="msg-text">{m.text}</div>;
    case "agentMessage":
      return <div className="msg-text">{streamed(streams, m, m.text)}</div>;
    case "reasoning": {
      const summary = arr(c.summary).map(str).join("\n\n") || m.text;
      const content = arr(c.content).map(str).join("\n\n");
      return (
        <details className="reasoning">
          <summary>Reasoning</summary>
          <div className="msg-text">{summary || content || "(no summary)"}</div>
        </details>
      );
    }
    case "plan":
      return (
        <div className="plan">
          <Text weight="bold" size="2">
            Plan
          </Text>
          <div className="msg-text">{streamed(streams, m, m.text || str(c.text))}</div>
        </div>
      );
    case "commandExecution": {
      const output = streamed(streams, m, str(c.aggregatedOutput));
      const exit = c.exitCode;
      return (
        <div className="command">
          <div className="command-line">
            <span aria-hidden="true">$ </span>
            <Code variant="ghost">{str(c.command) || m.text}</Code>
            {typeof exit === "number" && (
              <span className={exit === 0 ? "exit ok" : "exit bad"} data-testid="exit-code">
                exit {exit}
              </span>
            )}
          </div>
          {c.cwd ? <div className="muted small">in {str(c.cwd)}</div> : null}
          {output && <pre className="output" data-testid="command-output">{output}</pre>}
        </div>
      );
    }
    case "fileChange": {
      const changes = arr(c.changes).map(obj);
      return (
        <div className="file-change">
          {changes.length === 0 && <div className="msg-text">{m.text}</div>}
          {changes.map((ch, i) => {
            const kind = obj(ch.kind).type ?? ch.kind;
            return (
              <div key={i} className="file">
                <div className="file-path">
                  <Code variant="ghost">{str(ch.path)}</Code> <span className="muted small">{str(kind)}</span>
                </div>
                {ch.diff ? <Diff text={str(ch.diff)} kind={str(kind)} /> : null}
              </div>
            );
          })}
        </div>
      );
    }
    case "webSearch":
      return <div className="msg-text">Web search: {str(c.query) || m.text}</div>;
    case "contextCompaction":
      // Codex replaced the history the model sees with a summary of it (a
      // fork or branch onto another model does this before its first turn).
      return (
        <div className="msg-text muted" data-testid="context-compaction">
          Codex summarized the conversation so far: from here the model reads that summary, not the messages above.
        </div>
      );
    case "mcpToolCall":
    case "dynamicToolCall": {
      const result = c.result ?? c.error ?? c.contentItems;
      return (
        <div className="tool">
          <div>
            <Code variant="ghost">{m.text}</Code>
          </div>
          {c.arguments ? <pre className="output">{str(c.arguments)}</pre> : null}
          {result ? <pre className="output">{str(result)}</pre> : null}
        </div>
      );
    }
    default:
      return (
        <details className="raw">
          <summary>{m.text || m.kind}</summary>
          <pre className="output">{str(m.content)}</pre>
        </details>
      );
  }
}

const labels: Record<string, string> = {
  user: "You",
  assistant: "Agent",
  reasoning: "Reasoning",
  plan: "Plan",
  tool: "Tool",
  file_change: "File change",
  context_compaction: "Codex",
};

export function MessageView({ m, streams }: { m: MessageFieldsFragment; streams?: ReadonlyMap<string, string> }) {
  return (
    <div className="message" data-testid="message" data-role={m.role} data-kind={m.kind} data-message-id={m.id} data-status={m.status}>
      <div className="msg-role" aria-hidden="true">
        {labels[m.role] ?? m.role}
      </div>
      <Body m={m} streams={streams} />
    </div>
  );
}
