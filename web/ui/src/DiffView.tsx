// A readable diff of a git patch (issue 24): each file's hunks, unified or
// side by side, syntax-highlighted. react-diff-view parses and lays out the
// patch; refractor (Prism's grammars as a syntax tree, no HTML strings)
// highlights the lines.
import { useMemo, useState } from "react";
import { Diff, Hunk, parseDiff, tokenize, type FileData, type HunkTokens } from "react-diff-view";
import "react-diff-view/style/index.css";
import { refractor } from "refractor/core";
import bashLang from "refractor/bash";
import cLang from "refractor/c";
import clikeLang from "refractor/clike";
import cppLang from "refractor/cpp";
import csharpLang from "refractor/csharp";
import cssLang from "refractor/css";
import diffLang from "refractor/diff";
import dockerLang from "refractor/docker";
import goLang from "refractor/go";
import graphqlLang from "refractor/graphql";
import iniLang from "refractor/ini";
import javaLang from "refractor/java";
import javascriptLang from "refractor/javascript";
import jsonLang from "refractor/json";
import jsxLang from "refractor/jsx";
import kotlinLang from "refractor/kotlin";
import luaLang from "refractor/lua";
import makefileLang from "refractor/makefile";
import markdownLang from "refractor/markdown";
import markupLang from "refractor/markup";
import phpLang from "refractor/php";
import pythonLang from "refractor/python";
import rubyLang from "refractor/ruby";
import rustLang from "refractor/rust";
import scssLang from "refractor/scss";
import sqlLang from "refractor/sql";
import swiftLang from "refractor/swift";
import tomlLang from "refractor/toml";
import tsxLang from "refractor/tsx";
import typescriptLang from "refractor/typescript";
import yamlLang from "refractor/yaml";
import { languageOf } from "./state/code";

// The grammars of the languages languageOf names (Prism's, through
// refractor's core: only these are bundled).
for (const lang of [markupLang, clikeLang, cLang, cppLang, javascriptLang, typescriptLang, jsxLang, tsxLang, cssLang, scssLang, bashLang, csharpLang, diffLang, dockerLang, goLang, graphqlLang, iniLang, javaLang, jsonLang, kotlinLang, luaLang, makefileLang, markdownLang, phpLang, pythonLang, rubyLang, rustLang, sqlLang, swiftLang, tomlLang, yamlLang]) refractor.register(lang);

// react-diff-view's tokenizer expects refractor 3's highlight (a list of
// nodes); refractor 5 answers a root holding them.
const highlighter = {
  highlight: (text: string, language: string) => refractor.highlight(text, language).children,
};

// A page shows at most this many files of a patch, each at most this many
// changed lines highlighted (Prism on a huge file blocks the page).
const maxFiles = 100;
const maxHighlightedLines = 4000;

function pathOf(f: FileData): string {
  return f.type === "delete" ? f.oldPath : f.newPath;
}

function tokensOf(f: FileData): HunkTokens | undefined {
  const lang = languageOf(pathOf(f));
  const lines = f.hunks.reduce((n, h) => n + h.changes.length, 0);
  if (!lang || !refractor.registered(lang) || lines > maxHighlightedLines) return undefined;
  try {
    return tokenize(f.hunks, { highlight: true, refractor: highlighter as never, language: lang });
  } catch {
    // A grammar that fails on odd input: the lines stay plain.
    return undefined;
  }
}

function FileDiff({ f, split }: { f: FileData; split: boolean }) {
  const tokens = useMemo(() => tokensOf(f), [f]);
  const path = pathOf(f);
  return (
    <div className="diff-file" data-testid="diff-file" data-diff-path={path}>
      <div className="diff-file-head">
        <code>{f.type === "rename" ? `${f.oldPath} → ${f.newPath}` : path}</code>
        <span className="muted small">{f.type}</span>
      </div>
      {f.hunks.length === 0 ? (
        <div className="muted small diff-empty">{f.isBinary ? "Binary file" : "No text changes (mode or name only)"}</div>
      ) : (
        <Diff viewType={split ? "split" : "unified"} diffType={f.type} hunks={f.hunks} tokens={tokens} className="code-diff">
          {(hunks) => hunks.map((h) => <Hunk key={h.content} hunk={h} />)}
        </Diff>
      )}
    </div>
  );
}

export default function DiffView({ patch, truncated, label }: { patch: string; truncated: boolean; label: string }) {
  const [split, setSplit] = useState(false);
  const files = useMemo(() => {
    try {
      return parseDiff(patch);
    } catch {
      return null;
    }
  }, [patch]);
  if (files === null) return <pre className="output">{patch}</pre>;
  return (
    <div className="diff-view" data-testid="diff-view" aria-label={label}>
      <div className="diff-view-bar">
        <span className="muted small">
          {files.length} file{files.length === 1 ? "" : "s"}
        </span>
        <button type="button" className="linkish" aria-pressed={split} onClick={() => setSplit(!split)}>
          {split ? "Unified" : "Side by side"}
        </button>
      </div>
      {files.slice(0, maxFiles).map((f, i) => (
        <FileDiff key={`${i}:${pathOf(f)}`} f={f} split={split} />
      ))}
      {files.length > maxFiles && <p className="muted small">{files.length - maxFiles} more files are not shown.</p>}
      {truncated && <p className="muted small">The patch was cut at 4 MiB: the files after the cut are not shown.</p>}
    </div>
  );
}
