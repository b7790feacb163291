// A list of changed files (a session's changes, a turn's, a comparison
// side's): one element per file with data-file-path, its status and lines.
import type { FileChangeFieldsFragment } from "./gql/graphql";

const letter: Record<string, string> = { ADDED: "A", MODIFIED: "M", DELETED: "D" };
const word: Record<string, string> = { ADDED: "added", MODIFIED: "modified", DELETED: "deleted" };

export function FileList({ files, label, testId }: { files: readonly FileChangeFieldsFragment[]; label: string; testId?: string }) {
  return (
    <ul className="file-list" aria-label={label} data-testid={testId}>
      {files.map((f) => (
        <li key={f.path} data-file-path={f.path} data-status={f.status}>
          <span className={`file-status file-${f.status.toLowerCase()}`} title={word[f.status]} aria-hidden="true">
            {letter[f.status] ?? "?"}
          </span>
          <code className="file-name">{f.path}</code>
          <span className="sr-only"> {word[f.status]}</span>
          <span className="file-lines">
            <span className="add">+{f.additions}</span> <span className="del">−{f.deletions}</span>
          </span>
        </li>
      ))}
    </ul>
  );
}
